"""States across MuJoCo and multibody: ``qpos``/``qvel`` ↔ (q, v), the reference state ``qpos0`` and keyframes.

The Model of an MJCF file has its coordinates in MuJoCo's order and units (``bodies.py``): hinge and slide
coordinates are MuJoCo's (``ref`` included), ball and free quaternions are (w, x, y, z) in both. Velocities differ
only for free joints: MuJoCo's ``qvel`` of a free joint is (v, ω) with v the velocity of the body's origin in world
axes and ω the angular velocity in the body's axes; ours is [ω; v] with v in the body's axes, v_ours = Rᵀ v_MuJoCo
(R the body's rotation, from the quaternion in q). Every function takes one state or many (a leading axis: a
trajectory, ``data.qpos`` recorded over time).
"""
import numpy as np

from multibody.errors import ModelError
from multibody.model.rotations import quat_to_matrix

__all__ = ["state_from_mujoco", "state_to_mujoco", "initial_state", "keyframe", "mjcf_info"]


def mjcf_info(model):
    """The MJCF part of ``model.metadata`` (``ModelError`` for a model that was not read from an MJCF file)."""
    info = getattr(model, "metadata", {}).get("mjcf")
    if info is None:
        raise ModelError(f"model '{getattr(model, 'name', model)}' was not read from an MJCF file (no "
                         "metadata['mjcf'])", element="model")
    return info


def _free_joints(model):
    return [j for j in mjcf_info(model)["joints"] if j["type"] == "free"]


def _rows(x, n, what, model):
    x = np.array(x, dtype=float)
    if x.shape[-1:] != (n,):
        raise ModelError(f"{what} of model '{model.name}' must have {n} entries (MuJoCo's order), got shape {x.shape}",
                         element=what)
    return x


def _free_rotations(model, q):
    """(velocity address, R) of each free joint: R (leading axes of q, 3, 3) the rotation of its body."""
    for j in _free_joints(model):
        a = j["qposadr"]
        quat = q[..., a + 3:a + 7]
        yield j["dofadr"], quat_to_matrix(quat / np.linalg.norm(quat, axis=-1, keepdims=True))


def state_from_mujoco(model, qpos, qvel=None):
    """``(q, v)`` of the Model for MuJoCo's ``qpos`` and ``qvel`` (default zeros); arrays of states with a leading
    axis map row by row (module docstring)."""
    q = _rows(qpos, model.nq, "qpos", model)
    v = np.zeros(q.shape[:-1] + (model.nv,)) if qvel is None else _rows(qvel, model.nv, "qvel", model)
    out = v.copy()
    for d, R in _free_rotations(model, q):
        out[..., d:d + 3] = v[..., d + 3:d + 6]
        out[..., d + 3:d + 6] = np.einsum("...ji,...j->...i", R, v[..., d:d + 3])
    return q, out


def state_to_mujoco(model, q, v=None):
    """MuJoCo's ``(qpos, qvel)`` of the Model's state (q, v) (default v: zeros); the inverse of
    :func:`state_from_mujoco`."""
    q = _rows(q, model.nq, "q", model)
    v = np.zeros(q.shape[:-1] + (model.nv,)) if v is None else _rows(v, model.nv, "v", model)
    out = v.copy()
    for d, R in _free_rotations(model, q):
        out[..., d:d + 3] = np.einsum("...ij,...j->...i", R, v[..., d + 3:d + 6])
        out[..., d + 3:d + 6] = v[..., d:d + 3]
    return q, out


def initial_state(model):
    """(q, v) of MuJoCo's reference state: ``qpos0`` (every body at its pose in the file), at rest."""
    return state_from_mujoco(model, mjcf_info(model)["qpos0"])


def keyframe(model, key=0):
    """(q, v) of the keyframe ``key`` (its name or its number in the file), and its control (one per actuator)."""
    keys = mjcf_info(model)["keyframes"]
    found = [k for k in keys if k["name"] == key] if isinstance(key, str) else \
        ([keys[key]] if isinstance(key, (int, np.integer)) and -len(keys) <= key < len(keys) else [])
    if not found:
        raise ModelError(f"model '{model.name}' has no keyframe {key!r} (keyframes: "
                         f"{', '.join(k['name'] for k in keys) or 'none'})", element="keyframe")
    q, v = state_from_mujoco(model, found[0]["qpos"], found[0]["qvel"])
    return q, v, np.array(found[0]["ctrl"], dtype=float)
