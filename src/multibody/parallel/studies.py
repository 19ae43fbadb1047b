"""Point functions of the reference systems, ready for :func:`multibody.sweep` and ``multibody sweep``.

They are module-level functions (so worker processes can load them) that take named numbers and return a
dict of numbers. Examples::

    multibody sweep multibody.parallel.studies:bicycle_stability --grid c=-0.1:0.3:100 --grid lam=0:1.2:100 \\
        --out stability.parquet
    multibody sweep multibody.parallel.studies:hoop_monte_carlo --grid sample=0:199:200 --out hoop.csv
"""
import functools

import numpy as np

NAN = float("nan")


def bicycle_stability(v_max=100.0, n_grid=4001, **params):
    """Weave and capsize speeds of the benchmark bicycle with some design parameters changed (seed 003, §6b).

    ``params`` are any of the 26 parameters of seed 003, Table 1 (e.g. the trail ``c`` and the steer-axis
    tilt ``lam``), replacing those of :func:`multibody.systems.bicycle.benchmark_parameters`; ``v_max``,
    ``n_grid`` are passed to :func:`~multibody.systems.bicycle.critical_speeds`. Returns ``v_w``, ``v_c``
    (NaN where that speed does not occur in [0, v_max]) and ``stable`` (1 when v_w < v_c: the bicycle is
    self-stable between them, else 0). An invalid parameter set raises ``ModelError``, which a sweep
    records in its ``error`` column.
    """
    from multibody.systems import bicycle

    cs = bicycle.critical_speeds(bicycle.benchmark_parameters().replace(**params), v_max=v_max, n_grid=n_grid)
    return {"v_w": NAN if cs.weave is None else cs.weave, "v_c": NAN if cs.capsize is None else cs.capsize,
            "stable": 1.0 if cs.stable_interval else 0.0}


@functools.lru_cache(maxsize=4)
def _hoop(r, M):
    """The hoop model, built once per worker process (a Model is immutable, so it is safely shared)."""
    from multibody.systems.hoop_on_profile import hoop_model

    return hoop_model(r=r, M=M)


def hoop_turning(x0, speed=0.0, t_end=2.0, lam=10.0, rtol=1e-8, r=0.01, M=1.0, n_out=2001):
    """The heavy hoop of seed 000 started on the paper's profile: when does it first turn back?

    The hoop starts with its contact at abscissa ``x0``, its centre moving with ``speed`` along the tangent
    (:func:`multibody.systems.hoop_on_profile.initial_state`), and is simulated for ``t_end`` with the
    stabilized formulation and the energy constraint (seed 000, Sec. 3: gains ``lam``), DOP853 at ``rtol``.
    Returns ``t_turn``, the first time the rolling rate θ̇ changes sign (linear interpolation between the
    ``n_out`` output samples; NaN when it does not turn before ``t_end``), ``x_turn``, the contact abscissa
    at the sample before it, and ``max_residual``, the largest |f_i| of the four constraints over the run.
    """
    import multibody as mb
    from multibody.systems.hoop_on_profile import contact_point, initial_state

    model = _hoop(float(r), float(M))
    q0, v0 = initial_state(model, x0, speed)
    res = mb.simulate(model, q0, v0, t_end, formulation="stabilized", energy_constraint=True, lam=lam,
                      method="DOP853", rtol=rtol, atol=1e-2 * rtol, n_out=n_out)
    th = res.v[:, 2]
    k = np.nonzero(th[:-1] * th[1:] < 0.0)[0]
    t_turn = x_turn = NAN
    if k.size:
        k = k[0]
        t_turn = float(res.t[k] - th[k] * (res.t[k + 1] - res.t[k]) / (th[k + 1] - th[k]))
        x_turn = float(contact_point(model, res)[0][k])
    return {"t_turn": t_turn, "x_turn": x_turn,
            "max_residual": max(float(np.max(np.abs(v))) for v in res.residuals.values())}


def hoop_monte_carlo(sample, seed=0, x_low=-0.95, x_high=0.95, speed_sd=0.3, t_end=2.0):
    """One Monte-Carlo sample of the hoop's initial conditions: ``x0 ~ U(x_low, x_high)``,
    ``speed ~ N(0, speed_sd)``, drawn from the generator seeded by ``(seed, sample)`` (so a sample is the
    same wherever and whenever it runs); returns ``x0``, ``speed`` and :func:`hoop_turning`'s outputs."""
    rng = np.random.default_rng([int(seed), int(sample)])
    x0 = float(rng.uniform(x_low, x_high))
    speed = float(rng.normal(0.0, speed_sd))
    out = hoop_turning(x0, speed, t_end=t_end)
    return {"x0": x0, "speed": speed, **out}
