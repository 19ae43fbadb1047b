"""Frames, visual and collision shapes as model elements (``multibody.model.geometry``)."""
import pickle

import numpy as np
import pytest

import multibody as mb
from multibody.model.geometry import shape_from_dict


def _ball():
    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, inertia=(0.004, 0.004, 0.004))
    b.add_joint("free", mb.Free(), parent="ground", child="ball")
    return b


def test_elements_reach_the_model_and_pickle():
    b = _ball()
    b.add_frame("top", "ball", mb.Placement(translation=(0, 0, 0.1)))
    b.add_visual("look", "ball", mb.Sphere(0.1), color=(1, 0, 0))
    b.add_collision("geom", "ball", mb.Capsule(0.1, 0.2), friction=0.3)
    b.add_collision("floor", "ground", mb.HalfSpace())
    model = b.build()
    assert model.frame("top").body == 1 and model.frame("top").placement.translation.tolist() == [0, 0, 0.1]
    assert model.frame("ball").body == 1 and model.frame("ground").body == 0
    assert model.visuals[0].color == (1.0, 0.0, 0.0, 1.0)
    assert [(c.name, c.body, c.friction) for c in model.collisions] == [("geom", 1, 0.3), ("floor", 0, 1.0)]
    again = pickle.loads(pickle.dumps(model))
    assert again.collisions[0].shape == mb.Capsule(0.1, 0.2)


@pytest.mark.parametrize("shape", [mb.Sphere(0.5), mb.Sphere(0.0), mb.Capsule(0.1, 0.0), mb.Cylinder(0.2, 1.0), mb.Box((1, 2, 3)),
                                   mb.HalfSpace(), mb.Mesh("/a/b.stl", 0.001)])
def test_shapes_round_trip_as_data(shape):
    assert shape_from_dict(shape.as_dict()) == shape


@pytest.mark.parametrize("make, text", [
    (lambda: mb.Sphere(-1.0), "radius must be non-negative"),
    (lambda: mb.Sphere(float("nan")), "radius must be non-negative"),
    (lambda: mb.Capsule(0.0, 1.0), "radius must be positive"),
    (lambda: mb.Capsule(0.1, -1), "length must be non-negative"),
    (lambda: mb.Box((1, 2)), "size must be 3 numbers"),
    (lambda: mb.Box((1, 0, 2)), "size must be positive"),
    (lambda: mb.Mesh(""), "filename"),
])
def test_bad_shapes_are_refused(make, text):
    with pytest.raises(mb.ModelError, match=text):
        make()


def test_bad_elements_name_themselves():
    b = _ball()
    with pytest.raises(mb.ModelError, match="collision 'c': body 'nobody' is not defined"):
        b.add_collision("c", "nobody", mb.Sphere(1.0))
    with pytest.raises(mb.ModelError, match="collision 'c': friction must be a finite number >= 0"):
        b.add_collision("c", "ball", mb.Sphere(1.0), friction=-0.1)
    with pytest.raises(mb.ModelError, match="visual 'v': expected a shape"):
        b.add_visual("v", "ball", "sphere")
    with pytest.raises(mb.ModelError, match="frame 'ball': the name is already a frame or a body"):
        b.add_frame("ball", "ball")
    with pytest.raises(mb.ModelError, match="has no frame 'nowhere'"):
        b.build().frame("nowhere")
