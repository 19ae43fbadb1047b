"""The ``"cartesian"`` formulation: ``simulate(model, ..., formulation="cartesian")`` integrates the Cartesian
system of the Model (``from_model.py``) and reports the Result in the model's tree coordinates."""
import numpy as np

from multibody.errors import ModelError
from multibody.formulations.base import MAX_INITIAL_CORRECTION, register_formulation
from multibody.formulations.cartesian.coordinates import model_state_from_cartesian, nearest_branch
from multibody.formulations.cartesian.from_model import cartesian_from_model
from multibody.rows.reactions import cut_joint_frames, in_joint_frame


def cartesian_system(model, q0=None, v0=None, tau=None, energy=True, solver="auto", consistent=True, planar=None,
                     stabilization="projection", baumgarte=(10.0, 10.0), al_eps=None, max_correction=MAX_INITIAL_CORRECTION):
    """Absolute coordinates of every body + multipliers (seed 001 ch. 2), built from the Model.

    The outputs are converted back to the model's q and v. ``planar``: None detects a planar model and uses
    the three planar coordinates per body (seed 001 §2.5); False forces the spatial form. ``stabilization``:
    ``"projection"`` (positions and velocities projected onto the constraints after every step), ``"baumgarte"``
    (``b − 2α Q V − β² φ``, gains ``baumgarte``) or ``"none"`` (the acceleration-level rows alone). ``al_eps``:
    the relative regularization of the augmented-Lagrangian solve (default 1e-10; through singular positions see
    ``multibody.systems.iftomm.A02_AL_EPS``). ``solver``: the KKT
    solver of :class:`CartesianSystem` (``"auto"``: the tree-ordered block LDLᵀ when the joint graph allows
    it, else the augmented Lagrangian). Residuals: ``position``, ``velocity``, ``acceleration`` (max over the
    rows) and per non-joint constraint. ``consistent``, ``max_correction``: as in the constrained formulation
    (the correction measured on the model's coordinates). Reactions: per joint and constraint, the generalized reactions
    ``Q_iᵀλ`` on its two bodies (seed 001, eq. 2.26), shape (samples, 2, 3 or 6): force along the ground
    (planar: plane) axes and moment about the centre of mass (spatial: body axes).
    """
    from multibody.formulations.base import OdeSystem, check_state, initial_correction
    from multibody.result import Result

    if tau is not None:
        raise ModelError("the Cartesian formulation takes no generalized torques tau", element="tau")
    q0, v0 = check_state(model, q0, v0)
    if stabilization not in ("projection", "baumgarte", "none"):
        raise ModelError(f"stabilization must be 'projection', 'baumgarte' or 'none', got {stabilization!r}",
                         element="stabilization")
    s, emb = cartesian_from_model(model, q0, v0, solver=solver, planar=planar)
    if al_eps is not None:
        s.al_eps = float(al_eps)
    gains = tuple(map(float, baumgarte)) if stabilization == "baumgarte" else None
    x0, V0 = s.x0, s.v0
    correction = None
    if consistent:
        x0, V0 = s.consistent_initial(x0, V0)
        q1, v1 = model_state_from_cartesian(model, emb, x0, V0, previous=q0)
        correction = initial_correction(model, q0, q1, v0, v1, max_correction,
                                        [c.name for c in model.constraints])
    nq = s.nq

    def project_py(t, y):
        x = s.project_position(y[:nq], t=t)
        return np.concatenate([x, s.project_velocity(x, y[nq:])])

    steps_t, steps_q = [], []

    def on_step(t, y):
        """The joint coordinates at every accepted step (angles in (−π, π]): the outputs may be turns apart."""
        steps_t.append(t)
        steps_q.append(model_state_from_cartesian(model, emb, y[:nq])[0])

    def make_result(t, Y, info):
        Y = np.asarray(Y, float).reshape(len(t), -1)
        Q, Vm = _model_outputs(model, emb, nq, q0, t, Y, steps_t, steps_q)
        E_T, E_V, reac = [], [], {}
        res = {"position": [], "velocity": [], "acceleration": []}
        names = list(s.joint_rows)
        # sums the rows of each joint: (joints x rows); the generalized reaction of joint j is row j of A diag(λ) Q
        A = _row_sums(names, s.joint_rows, s.nc)
        com = np.asarray(model.com)
        for k in range(len(t)):
            x, V = Y[k, :nq], Y[k, nq:]
            if energy:
                Etot = s.energy(x, V)
                T = _kinetic(s, V)
                E_T.append(T)
                E_V.append(Etot - T)
            Qc, b, phi = s._assemble(x, V)
            xdd, lam = s.accelerations(t[k], x, V)
            res["position"].append(np.abs(phi).max(initial=0))
            res["velocity"].append(np.abs(Qc @ V).max(initial=0))
            res["acceleration"].append(np.abs(Qc @ xdd - b).max(initial=0))
            if isinstance(Qc, np.ndarray):
                gens = A @ (lam[:, None] * Qc)
            else:
                gens = (A @ Qc.tocsr().multiply(lam[:, None]).tocsr()).toarray()
            R, P = emb.placements(model, x)
            cut = cut_joint_frames(model, R, P)
            for jn, (name, rows) in enumerate(s.joint_rows.items()):
                if s.joint_bodies[name] is None:          # a constraint that is not a joint: its multipliers
                    reac.setdefault(name, []).append(lam[rows])
                    res.setdefault(name, []).append(np.abs(phi[rows]).max(initial=0))
                    continue
                b, Rj, oj = cut[name] if name in cut else (model.joint(name).child, None, None)
                if Rj is None:
                    Rj, oj = R[b], P[b]
                reac.setdefault(name, []).append(_joint_reaction(emb, gens[jn].reshape(s.nb, s.nd)[b - 1], R[b],
                                                                 P[b] + R[b] @ com[b], Rj, oj))
        info = dict(info)
        info["cartesian"] = dict(bodies=s.nb, coordinates=s.nq, constraint_rows=s.nc, solver=s._solver,
                                 planar=emb.dim == 2, redundant=bool(s.redundant), rank=int(getattr(s, "rank0", s.nc)))
        en = {"kinetic": np.array(E_T), "potential": np.array(E_V)} if energy and len(t) else {}
        return Result(t, Q, Vm, energy=en, residuals={k: np.array(v) for k, v in res.items()},
                      reactions={k: np.array(v) for k, v in reac.items()}, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=np.concatenate([x0, V0]), fun=lambda t, y: s.rhs(t, y, gains), make_result=make_result,
                     split=lambda y: (y[:nq], y[nq:]), rhs=None,
                     project_py=project_py if stabilization == "projection" else None, nsplit=nq, on_step=on_step,
                     python_only=True, info={"formulation": "cartesian", "planar": emb.dim == 2,
                                             "stabilization": stabilization, "initial_correction": correction})


def _model_outputs(model, emb, nq, q0, t, Y, steps_t, steps_q):
    """The model's (Q, V) at the output times ``t`` of the Cartesian states ``Y``, every angle on the branch the
    motion reached: the outputs and the accepted steps ``steps_t``/``steps_q`` (``on_step``) taken in the order of
    time, each on the branch nearest the one before, from ``q0`` (an angle turns less than half a turn in an
    accurate step; between outputs it may turn many times)."""
    Q = np.zeros((len(t), model.nq))
    Vm = np.zeros((len(t), model.nv))
    times = np.concatenate([np.asarray(t, dtype=float), np.asarray(steps_t, dtype=float)])
    sign = -1.0 if len(t) > 1 and t[-1] < t[0] else 1.0
    prev = q0
    for i in np.argsort(sign * times, kind="stable"):
        if i < len(t):
            Q[i], Vm[i] = model_state_from_cartesian(model, emb, Y[i, :nq], Y[i, nq:], prev)
            prev = Q[i]
        else:
            prev = nearest_branch(model, steps_q[i - len(t)], prev)
    return Q, Vm


def _joint_reaction(emb, gen, Rb, c, Rj, oj):
    """The generalized reaction ``Q_bᵀλ`` of a joint on its child body b (seed 001 eq. 2.26: planar (F_x, F_y,
    M_z), spatial (force in ground axes, moment about the centre of mass c in body axes R_b)) as the joint
    reaction of ``multibody.rows.reactions``: [moment about the joint origin oj; force] in the joint axes Rj."""
    if emb.dim == 2:
        F = gen[0] * emb.e1 + gen[1] * emb.e2
        Mc = gen[2] * emb.n
    else:
        F, Mc = gen[:3], Rb @ gen[3:]
    return in_joint_frame(np.concatenate([Mc + np.cross(c, F), F]), Rj, oj)


def _row_sums(names, joint_rows, nc):
    """The sparse (len(names) x nc) matrix whose row j adds the constraint rows of joint ``names[j]``."""
    from scipy.sparse import csr_matrix

    cols = [np.arange(nc)[joint_rows[name]] for name in names]
    rows = np.concatenate([np.full(len(c), j) for j, c in enumerate(cols)]) if cols else np.zeros(0, int)
    cols = np.concatenate(cols) if cols else np.zeros(0, int)
    return csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(names), nc))


def _kinetic(s, V):
    W = V.reshape(s.nb, s.nd)
    if s.dim == 2:
        return 0.5 * float(np.sum(s.mass * (W[:, 0] ** 2 + W[:, 1] ** 2) + s.J * W[:, 2] ** 2))
    return 0.5 * float(np.sum(s.mass * np.sum(W[:, :3] ** 2, axis=1)) + np.einsum("ka,kab,kb->", W[:, 3:], s.J,
                                                                                    W[:, 3:]))


register_formulation("cartesian", cartesian_system)
