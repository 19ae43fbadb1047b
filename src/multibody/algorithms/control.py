"""The generalized forces of a model's controllers at a state: ``controller_torques(model, q, v, t)``.

The controllers (``mb.JointPD``, ``mb.ComputedTorque``; ``multibody.model.controllers``) are evaluated by the
kernel the simulations run in their compiled loops (``kernels/control.py``), so this is the τ they add there.

>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, -9.81))
>>> b.add_body("arm", mass=2.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
'arm'
>>> b.add_joint("shoulder", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="arm")
'shoulder'
>>> b.add_controller("hold", mb.JointPD(kp=100.0, kd=20.0, target=[0.0]))
'hold'
>>> model = b.build()
>>> float(controller_torques(model, [0.0], [0.0])[0])    # at the target: the gravity torque m g l = 2 · 9.81 · 0.5
-9.81
"""
import numpy as np

from multibody.algorithms.dynamics import as_vector, data_at, fill_general
from multibody.kernels.control import control_kernel
from multibody.model.controllers import ControllerTable

__all__ = ["controller_torques"]


def controller_torques(model, q, v, t=0.0, data=None):
    """τ (nv,): the sum of the generalized forces of ``model.controllers`` at time t and state (q, v) (zero on the
    coordinates they do not act on)."""
    d = data_at(model, data, t)
    q = as_vector(q, d.nq, "q", model)
    v = as_vector(v, d.nv, "v", model)
    fill_general(d, q, v, t)
    n, nv = d.nbodies + 1, d.nv
    table = ControllerTable(model.controllers, nv)
    out = np.empty(nv)
    control_kernel(float(t), q, v, d.mi, d.mf, table.CI, table.CF, table.RT, table.RC, table.gravity,
                   table.inverse_dynamics, d.work, np.zeros((n, 4)), np.zeros(nv), np.zeros(nv), np.zeros(nv),
                   d.no_fext, out)
    return out
