"""``simulate(..., formulation=...)`` finds the constrained formulations without a prior import."""
import json
import subprocess
import sys

SCRIPT = r"""
import json
import numpy as np
import multibody as mb

# a parallelogram four-bar: three unit links and the ground, loop closed by the cut joint D
b = mb.ModelBuilder(gravity=(0, -9.81, 0))
for n in ("l1", "l2", "l3"):
    b.add_body(n, 1.0, com=(0.5, 0, 0), inertia=(0.001, 1 / 12, 1 / 12))
b.add_joint("A", mb.Revolute(), "ground", "l1")
b.add_joint("B", mb.Revolute(), "l1", "l2", placement=(None, (1, 0, 0)))
b.add_joint("C", mb.Revolute(), "l2", "l3", placement=(None, (1, 0, 0)))
b.add_joint("D", mb.Revolute(), "l3", "ground", placement=(None, (1, 0, 0)), child_placement=(None, (1, 0, 0)))
m = b.build()
q0, v0 = np.array([np.pi / 2, -np.pi / 2, -np.pi / 2]), np.array([1.0, -1.0, 1.0])
out = {}
for f in ("constrained", "cartesian"):
    r = mb.simulate(m, q0, v0, 2.0, formulation=f, rtol=1e-10)
    out[f] = {"q": r.q[-1].tolist(), "drift": float(r.energy_drift())}
print(json.dumps(out))
"""


def test_constrained_formulations_register_themselves():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    a, c = out["constrained"], out["cartesian"]
    # parallelogram: the coupler keeps its orientation, q2 = -q1 (four-bar kinematics)
    assert abs(a["q"][0] + a["q"][1]) < 1e-8
    assert max(abs(x - y) for x, y in zip(a["q"], c["q"])) < 1e-7
    assert a["drift"] < 1e-8 and c["drift"] < 1e-8
