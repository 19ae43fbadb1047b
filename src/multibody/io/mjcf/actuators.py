"""MJCF actuators: their parameters as MuJoCo's general actuator, their generalized forces, and what of them a
Model carries.

Every actuator element is read into the parameters of MuJoCo's general actuator (:func:`apply_actuator`, as MuJoCo's
XML reader does: ``motor`` is a unit gain; ``position`` a gain kp with the bias −kp·length − kv·velocity; ``velocity``
a gain kv with the bias −kv·velocity; ``general`` states them). For a control u the actuator's force is (MuJoCo's
``mj_fwdActuation``, without activation dynamics)

    f = gain · u + b₀ + b₁ l + b₂ l̇,      u clamped to ``ctrlrange`` when ``ctrllimited``, f to ``forcerange``,

with the length l = g q (a hinge or slide joint, gear g) or g Σ c_k q_k (a fixed tendon of coefficients c_k), and
its generalized force is g f on the joint (g c_k f on each joint of the tendon). :func:`actuator_forces` computes
these for any control: the inputs of a run (``tau=``). A Model read with a constant control (``load_mjcf(...,
ctrl=u)``, MuJoCo's default u = 0) carries them as model elements: a gain-only actuator as the constant effort g·f
of its joint (``effort``), one with a bias on a hinge or slide joint as a ``JointPD`` controller (τ = g f = Kp (q* −
q) − Kd q̇ with Kp = −g² b₁, Kd = −g² b₂, no gravity compensation), the actuators of one joint summed into one.
What a Model cannot carry is named in the file's warning: force limits of an actuator with a bias (the controller
does not clamp), biases through tendons, activation dynamics with a control other than 0, other transmissions.
"""
import numpy as np

from multibody.io.mjcf.document import fail, numbers

__all__ = ["apply_actuator", "actuator_forces", "SHORTCUTS"]

#: the actuator shortcuts read (the others are named in the warning)
SHORTCUTS = ("general", "motor", "position", "velocity")
TRANSMISSIONS = ("joint", "jointinparent", "tendon", "site", "body", "cranksite", "slidersite", "refsite")
_KINDS = {"dyntype": ("none", "integrator", "filter", "filterexact", "muscle", "user"),
          "gaintype": ("fixed", "affine", "muscle", "user"), "biastype": ("none", "affine", "muscle", "user")}


def _fresh():
    return {"dyntype": "none", "gaintype": "fixed", "biastype": "none", "dynprm": [1.0] + [0.0] * 9,
            "gainprm": [1.0] + [0.0] * 9, "biasprm": [0.0] * 10, "ctrllimited": "auto", "forcelimited": "auto",
            "ctrlrange": None, "forcerange": None, "gear": [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "kind": "general",
            "other": []}


def apply_actuator(params, elem, where, source):
    """``params`` (a general actuator's parameters; None: MuJoCo's) updated by the actuator element ``elem`` (a
    default's or the model's), as MuJoCo's XML reader applies it (module docstring)."""
    p = _fresh() if params is None else {k: (list(v) if isinstance(v, list) else v) for k, v in params.items()}
    if elem is None:
        return p
    tag = elem.tag
    p["kind"] = tag
    for key in ("ctrllimited", "forcelimited"):
        if key in elem.attrib:
            if elem.get(key) not in ("true", "false", "auto"):
                fail(source, f"{where}/@{key}", f"expected true, false or auto, got '{elem.get(key)}'")
            p[key] = elem.get(key)
    for key in ("ctrlrange", "forcerange"):
        if key in elem.attrib:
            lo, hi = numbers(elem.get(key), 2, f"{where}/@{key}", source)
            p[key] = [lo, hi]
    if "gear" in elem.attrib:
        g = numbers(elem.get("gear"), 6, f"{where}/@gear", source, at_least=1)
        p["gear"] = list(g) + [0.0] * (6 - len(g))
    for key in ("actlimited", "actrange", "actdim", "actearly", "lengthrange", "cranklength", "nsample",
                "interp", "delay"):
        if key in elem.attrib and key not in p["other"]:
            p["other"].append(key)
    if tag == "general":
        for key, values in _KINDS.items():
            if key in elem.attrib:
                if elem.get(key) not in values:
                    fail(source, f"{where}/@{key}", f"expected one of {', '.join(values)}, got '{elem.get(key)}'")
                p[key] = elem.get(key)
        for key in ("dynprm", "gainprm", "biasprm"):
            if key in elem.attrib:
                v = numbers(elem.get(key), 10, f"{where}/@{key}", source, at_least=1)
                p[key] = list(v) + [0.0] * (10 - len(v))
    elif tag == "motor":
        p["gainprm"][0] = 1.0
        p.update(dyntype="none", gaintype="fixed", biastype="none")
    elif tag == "position":
        p["biasprm"] = [0.0] * 10
        if "kp" in elem.attrib:
            p["gainprm"][0] = float(numbers(elem.get("kp"), 1, f"{where}/@kp", source)[0])
        p["biasprm"][1] = -p["gainprm"][0]
        if "kv" in elem.attrib:
            p["biasprm"][2] = -float(numbers(elem.get("kv"), 1, f"{where}/@kv", source)[0])
        p.update(dyntype="none", gaintype="fixed", biastype="affine")
        for key in ("timeconst", "dampratio", "inheritrange"):
            if key in elem.attrib and key not in p["other"]:
                p["other"].append(key)
    elif tag == "velocity":
        p["biasprm"] = [0.0] * 10
        if "kv" in elem.attrib:
            p["gainprm"][0] = float(numbers(elem.get("kv"), 1, f"{where}/@kv", source)[0])
        p["biasprm"][2] = -p["gainprm"][0]
        p.update(dyntype="none", gaintype="fixed", biastype="affine")
    return p      # intvelocity, damper, cylinder, muscle, adhesion, plugin: named in the warning


def limited(flag, given, autolimits):
    """Whether a range applies: ``"true"``, or ``"auto"`` with a range given and the compiler's autolimits."""
    return flag == "true" or (flag == "auto" and autolimits and given)


def actuator_forces(model, ctrl, q, v):
    """The generalized forces (nv,) of the model's MJCF actuators (``model.metadata["mjcf"]["actuators"]``) for the
    control ``ctrl`` (one value per actuator, in the file's order) at (q, v): the module docstring's forces through
    joint and fixed-tendon transmissions (MuJoCo's ``qfrc_actuator`` without activation dynamics)."""
    from multibody.errors import ModelError

    info = model.metadata.get("mjcf", {})
    acts = info.get("actuators", ())
    ctrl = np.asarray(ctrl, dtype=float).reshape(-1)
    if ctrl.shape != (len(acts),):
        raise ModelError(f"model '{model.name}': ctrl must hold {len(acts)} values (one per actuator: "
                         f"{', '.join(a['name'] for a in acts[:10])}), got {ctrl.shape[0]}", element="ctrl")
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    tau = np.zeros(model.nv)
    for a, u in zip(acts, ctrl):
        moment = actuator_moment(model, a)
        if moment is None:
            continue
        iq, iv, coef = moment
        g = a["gear"][0]
        length = g * float(np.dot(coef, q[iq]))
        rate = g * float(np.dot(coef, v[iv]))
        if a.get("ctrlrange") is not None:
            u = min(max(u, a["ctrlrange"][0]), a["ctrlrange"][1])
        gp, bp = a["gainprm"], a["biasprm"]
        gain = gp[0] + (gp[1] * length + gp[2] * rate if a["gaintype"] == "affine" else 0.0)
        force = gain * u + ((bp[0] + bp[1] * length + bp[2] * rate) if a["biastype"] == "affine" else 0.0)
        if a.get("forcerange") is not None:
            force = min(max(force, a["forcerange"][0]), a["forcerange"][1])
        tau[iv] += g * coef * force
    return tau


def actuator_moment(model, act):
    """(q indices, v indices, coefficients) of an actuator's length l = g Σ c_k q_k, or None (a transmission that
    is not a hinge or slide joint or a fixed tendon)."""
    trn = act.get("transmission")
    if trn is None:
        return None
    joints = [(name, 1.0) for name in [trn["joint"]]] if "joint" in trn else trn.get("joints")
    if not joints:
        return None
    iq, iv, coef = [], [], []
    for name, c in joints:
        j = model.joint(name)
        if j.joint.nq != 1 or not j.joint.linear_coordinates:
            return None
        iq.append(j.q_slice.start)
        iv.append(j.v_slice.start)
        coef.append(float(c))
    return np.array(iq), np.array(iv), np.array(coef)
