"""Chains of rigid bodies joined by cardan (universal) joints: the test systems of seed 002.

Seed 002 (Ivanov 2017; reference notes §A.9) compares its sweep and Cholesky solvers on "chains of rigid bodies
connected by two-degree-of-freedom cardan joints" of N = 5, 10, …, 50 bodies (n = 2N degrees of freedom).
The paper gives no masses, lengths, initial data or step sizes (notes §A.9: "no tables, no individual bar
values, no machine or language details, and no step sizes"), so the links here are our choice: identical
uniform cylinders hanging along −z under gravity, each hinged at its upper end to the lower end of the one
above, the first to the ground.

The cardan joint of the notes (§A.11), Θ_i = (R_e1(α) R_e2(β))ᵀ with e₂ fixed in the body, is our
``Universal(axis1=e1, axis2=e2)``: the child frame is rotated by rot(e1, α) rot(e2, β), e2 fixed in the child.
"""
import numpy as np

from multibody.errors import ModelError
from multibody.model import ModelBuilder, Placement, Universal


def cardan_chain(n, length=1.0, mass=1.0, radius=0.05, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0), g=9.81):
    """A chain of ``n`` identical links joined by cardan joints (seed 002 §A.9, the paper's test system).

    Link k (``"link<k>"``, k = 1..n) is a uniform solid cylinder of ``mass``, ``length`` and ``radius``; its
    frame is at its upper end, its axis along −z, so its centre of mass is at (0, 0, −length/2) and its
    inertia about it diag(I, I, m r²/2) with I = m (3 r² + length²)/12. Joint ``"cardan<k>"`` is
    ``Universal(axis1, axis2)`` at the lower end (0, 0, −length) of link k − 1 (at the origin for k = 1).
    Gravity (0, 0, −g). q = (α1, β1, …, αn, βn); q = 0 is the chain hanging straight down.
    """
    n = int(n)
    if n < 1:
        raise ModelError(f"cardan_chain needs n >= 1 links, got {n}", element="n")
    b = ModelBuilder(gravity=(0.0, 0.0, -g), name=f"cardan_chain_{n}")
    side = mass * (3.0 * radius * radius + length * length) / 12.0
    inertia = np.diag([side, side, 0.5 * mass * radius * radius])
    parent = "ground"
    for k in range(1, n + 1):
        b.add_body(f"link{k}", mass=mass, com=(0.0, 0.0, -0.5 * length), inertia=inertia)
        b.add_joint(f"cardan{k}", Universal(axis1=axis1, axis2=axis2), parent=parent, child=f"link{k}",
                    placement=Placement(translation=(0.0, 0.0, 0.0 if k == 1 else -length)))
        parent = f"link{k}"
    return b.build()
