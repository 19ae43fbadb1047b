"""Cartesian (absolute) coordinates with Lagrange multipliers (seed 001, ch. 2).

Every body carries its own absolute coordinates; joints are written as constraint equations at the
acceleration level, each one in the book's form ``Q_i Ẍ_i + Q_j Ẍ_j = b`` (seed 001, eqs. 2.22, 2.28,
2.43), and the Newton–Euler equations of all bodies are solved together with them for the
accelerations and the multipliers at every step (seed 001, eq. 2.49).

Coordinates (stated once, used everywhere in this module)
---------------------------------------------------------
* The body frame has its origin at the **centre of mass** (the book's convention, seed 001 §2.2);
  every point of a body is given relative to its centre of mass, in body axes.
* **Planar** systems (``dim=2``): body i has ``X_i = (x_i, y_i, φ_i)``, velocity ``(ẋ, ẏ, φ̇)``,
  acceleration ``Ẍ_i = (ẍ, ÿ, φ̈)``, mass matrix ``diag(m, m, J)`` (seed 001 §2.5).
* **Spatial** systems (``dim=3``): body i has position ``r_i`` (3, inertial) and a unit quaternion
  (4, scalar first, body → inertial rotation ``A_i``): 7 coordinates.  Its velocity is
  ``V_i = [ṙ_i (inertial); ω_i (body axes)]`` (6) and ``Ẍ_i = [r̈_i; ω̇_i]`` — the book's mixed-frame
  generalized acceleration (seed 001 §0.2, eq. 2.9).  The quaternion moves by
  ``q̇ = ½ q ⊗ (0, ω)``.
* Ground is body 0 / the name ``"ground"``: ``A = E``, ``r = 0``, at rest.

Sign convention of the multipliers: ``M Ẍ = F + Qᵀ λ`` (seed 001, eq. 2.45, gyroscopic sign
corrected).  The generalized reaction of a joint on body i is ``Q_iᵀ λ`` (seed 001, eq. 2.26):
force in inertial axes, moment about the centre of mass in body axes (planar: a scalar).

Linear solvers (``solver=``)
----------------------------
``"tree"``   the block LDLᵀ of the reordered KKT matrix without fill-in (seed 001 §2.7, eqs. 2.55–2.61,
             after Baraff 1996), for constraint graphs that are trees once the joints to the ground
             are merged into their body's block (this avoids the singular zero pivot of a constraint
             leaf, see the notes on §2.7);
``"sparse"`` scipy.sparse LU of the KKT matrix (general fallback, any topology);
``"dense"``  dense LU of the KKT matrix;
``"schur"``  range-space form ``λ = (Q M⁻¹ Qᵀ)⁻¹ (Q M⁻¹ F − b)`` (seed 001, eqs. 2.52–2.54);
``"al"``     augmented Lagrangian on the quasi-definite ``[[M, Qᵀ], [Q, −εI]]`` (Bayo, García de Jalón
             & Serna 1988), three iterations: exact for independent constraints, bounded for redundant
             constraints (A04 Bricard) and at singular positions (A02);
``"robust"`` rank-revealing least squares (small systems) or an augmented-Lagrangian iteration on
             ``M + α QᵀQ`` (large systems);
``"auto"``   ``"tree"`` when the constraint graph allows it, else ``"al"`` (dense LU up to 300 unknowns,
             sparse LU above).  The tree, dense, sparse and Schur solves are checked by their residual
             and fall back to ``"al"`` when the matrix is singular.

One module per concept:

=================  ================================================================================================
``primitives``     the constraint primitives: Q_i, Q_j, b and the residual of each kind of row
``joints``         the joint library: each joint a set of primitive rows; :class:`RowBlock`
``forces``         springs and dampers, body and relative torques
``system``         :class:`CartesianSystem`: bodies, joints, forces; accelerations, multipliers, projections
``solvers``        the KKT solves: tree-ordered LDLᵀ, LU, Schur, augmented Lagrangian, least squares
``embedding``      the plane (or space) a Model's Cartesian coordinates live in
``model_rows``     a Model's constraints as rows of the Cartesian system
``coordinates``    the maps between a Model's tree coordinates and its Cartesian coordinates
``from_model``     the Cartesian system of a Model
``formulation``    the ``"cartesian"`` formulation, registered for ``simulate``
=================  ================================================================================================

The rotation helpers (quaternions) are :mod:`multibody.model.rotations`.
"""
from multibody.formulations.cartesian.joints import (FixedJoint, HingeJoint, PlanarAngle, PlanarJoint, PlanarPointLine,
                                                     PlanarPrismatic, PlanarRevolute, PointPlane, PrismaticJoint,
                                                     RelativeRotation, RowBlock, SphericalJoint, UniversalJoint)
from multibody.formulations.cartesian.forces import BodyTorque, PointSpring, RelativeTorque
from multibody.formulations.cartesian.system import CartesianSystem
from multibody.formulations.cartesian.solvers import tree_ldlt_solve
from multibody.formulations.cartesian.coordinates import model_state_from_cartesian
from multibody.formulations.cartesian.from_model import cartesian_from_model
from multibody.formulations.cartesian.formulation import cartesian_system

__all__ = [
    "CartesianSystem",
    "RowBlock",
    "PlanarPointLine",
    "PlanarRevolute",
    "PlanarAngle",
    "PlanarPrismatic",
    "PointPlane",
    "RelativeRotation",
    "SphericalJoint",
    "HingeJoint",
    "UniversalJoint",
    "PlanarJoint",
    "PrismaticJoint",
    "FixedJoint",
    "PointSpring",
    "BodyTorque",
    "RelativeTorque",
    "tree_ldlt_solve",
    "cartesian_from_model",
    "model_state_from_cartesian",
    "cartesian_system",
]
