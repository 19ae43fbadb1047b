"""Robot files whose dynamics are not defined (issue 35): a moving link with no mass and nothing it carries.

``repair=True`` gives it the documented bounds (``model.inertia.BOUND_MASS``, ``BOUND_INERTIA``: MuJoCo's
``boundmass``/``boundinertia``) and says so in the InertiaWarning; ``kinematics_only=True`` keeps it massless: the
kinematic algorithms work, and every dynamics call refuses the model in one line naming the link.
"""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import InertiaWarning, ModelError
from multibody.io.urdf import parse_urdf
from multibody.model.inertia import BOUND_INERTIA, BOUND_MASS

URDF = """<robot name="gripper">
  <link name="base"/>
  <link name="arm"><inertial><mass value="2.0"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="finger"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="pinch" type="prismatic"><parent link="arm"/><child link="finger"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="10" velocity="1"/></joint>
</robot>"""


def test_plain_load_refuses_and_names_both_ways_out():
    with pytest.raises(ModelError, match=r"link 'finger' has no mass .* repair=True, which bounds its mass, or "
                                         r"kinematics_only=True"):
        parse_urdf(URDF)


def test_repair_bounds_the_mass_and_inertia():
    with pytest.warns(InertiaWarning, match="link 'finger' has no mass but moves: given 1e-06 kg"):
        model = parse_urdf(URDF, repair=True)
    i = model.body_index("finger")
    assert model.mass[i] == BOUND_MASS and np.allclose(model.inertia_com[i], BOUND_INERTIA * np.eye(3))
    assert model.kinematics_only is None
    q = np.array([0.3, 0.01])
    M = mb.crba(model, q)
    assert np.linalg.eigvalsh(M)[0] > 0.0
    np.testing.assert_allclose(M[1, 1], BOUND_MASS, rtol=1e-12)       # the finger's own mass along its slide


def test_kinematics_only_refuses_every_dynamics_call_naming_the_link():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = parse_urdf(URDF, kinematics_only=True)
    assert "link 'finger' has no mass" in model.kinematics_only
    q, v = np.array([0.3, 0.01]), np.array([0.1, 0.0])
    R, p = mb.frame_placement(model, q, "finger")
    np.testing.assert_allclose(p, [0.4 * np.cos(0.3) - 0.01 * np.sin(0.3), 0.4 * np.sin(0.3) + 0.01 * np.cos(0.3),
                                   0.0], atol=1e-15)
    assert mb.frame_jacobian(model, q, "finger").shape == (6, 2)
    target = mb.frame_placement(model, np.array([1.2, 0.03]), "finger")[1]
    ik = mb.inverse_kinematics(model, {"finger": target}, q)
    np.testing.assert_allclose(mb.frame_placement(model, ik.q, "finger")[1], target, atol=1e-9)
    calls = {"rnea": lambda: mb.rnea(model, q, v, v), "aba": lambda: mb.aba(model, q, v, v),
             "crba": lambda: mb.crba(model, q), "the derivatives of the dynamics": lambda: mb.minv(model, q),
             "the centroidal momentum": lambda: mb.centroidal_map(model, q),
             "simulate": lambda: mb.simulate(model, q, v, 0.1)}
    for what, call in calls.items():
        with pytest.raises(ModelError, match=f"model 'gripper' was read for its kinematics only, so {what} is not "
                                             "defined: link 'finger' has no mass"):
            call()
