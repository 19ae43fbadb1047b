"""The fixed-step methods' names, codes and coefficients, shared by the compiled loops (``rk_template.py``, the
SIMD lanes of ``lanes.py``) and the Python loop of ``fixed_step.py`` (whose module docstring describes the
methods).
"""
import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED

__all__ = ["METHODS", "STAGES", "KAHAN_LI_S9ODR6", "SV_TOL", "SV_FLOOR", "SV_MAX_ITER", "TABLEAU_A", "TABLEAU_B",
           "TABLEAU_C", "TABLEAU_DIV", "TABLEAU_STAGES", "stage_state", "all_finite"]

#: Method name -> integer code understood by the loops.
METHODS = {"RK2": 0, "MIDPOINT": 0, "HEUN": 1, "RK4": 2, "VERLET": 3, "STORMER": 3, "STORMER6": 4}

#: Number of right-hand-side evaluations per step, by method code (STORMER6: its 9 Störmer–Verlet stages;
#: each takes three or more evaluations, as many as its fixed-point iterations need).
STAGES = {0: 2, 1: 2, 2: 4, 3: 3, 4: 9}

#: Kahan & Li's s9odr6a composition coefficients (Math. Comp. 66 (1997) 1089–1099; GNI §V.3.2), for STORMER6
KAHAN_LI_S9ODR6 = (0.39216144400731413927925056, 0.33259913678935943859974864, -0.70624617255763935980996482,
                   0.08221359629355080023149045, 0.79854399093482996339895035, 0.08221359629355080023149045,
                   -0.70624617255763935980996482, 0.33259913678935943859974864, 0.39216144400731413927925056)
#: STORMER6 fixed-point iterations: the relative change that ends them; the change accepted when they stop
#: contracting (at the round-off floor of the right-hand side); their limit per implicit equation
SV_TOL = 1e-15
SV_FLOOR = 1e-12
SV_MAX_ITER = 50


def _tableaux():
    """The explicit (partitioned) Butcher tableaux of the methods, by code, for the compiled loops: stage s
    (after the first, at x) evaluates at ``t + C[s] h`` and ``x + h Σ_r A[s, r, part] K_r``; the step is
    ``x + (h / DIV) Σ_r B[r, part] K_r``; ``part`` 0 are the positions (the first ``nsplit`` entries of x), 1
    the velocities. Only VERLET has two different parts (kick-drift-kick); DIV keeps the classical forms
    (RK4: h/6 (k1 + 2 k2 + 2 k3 + k4)). STORMER6 (code 4) is not a tableau (its rows stay zero; the loops
    step it with its own implicit stages)."""
    A = np.zeros((5, 4, 4, 2))
    B = np.zeros((5, 4, 2))
    C = np.zeros((5, 4))
    DIV = np.ones(5)
    A[0, 1, 0] = 0.5  # explicit midpoint
    B[0, 1] = 1.0
    C[0, 1] = 0.5
    A[1, 1, 0] = 1.0  # Heun
    B[1, 0] = B[1, 1] = 1.0
    C[1, 1] = 1.0
    DIV[1] = 2.0
    A[2, 1, 0] = A[2, 2, 1] = 0.5  # classical RK4
    A[2, 3, 2] = 1.0
    B[2, :4] = ((1.0,), (2.0,), (2.0,), (1.0,))
    C[2, 1:4] = (0.5, 0.5, 1.0)
    DIV[2] = 6.0
    A[3, 1, 0, 1] = A[3, 2, 0, 1] = 0.5  # Störmer–Verlet: kick v by h/2 a(q, v) ...
    A[3, 2, 1, 0] = 1.0  # ... drift q by h q̇(q, v½) ...
    B[3, 1, 0] = 1.0
    B[3, 0, 1] = B[3, 2, 1] = 0.5  # ... kick v by h/2 a(q+, v½)
    C[3, 1:3] = (0.5, 1.0)
    stages = np.array([STAGES[k] for k in range(5)], dtype=np.int64)
    for arr in (A, B, C, DIV, stages):
        arr.flags.writeable = False
    return A, B, C, DIV, stages


TABLEAU_A, TABLEAU_B, TABLEAU_C, TABLEAU_DIV, TABLEAU_STAGES = _tableaux()


@njit(**COMPILED, inline="always")
def stage_state(method, s, x, h, nsplit, K, k0, xt):
    """The state at which stage ``s`` of ``method`` evaluates, ``xt = x + h Σ_r A[s, r, part] K_r``, or for
    ``s`` = the method's stage count the step's end, ``xt = x + (h / DIV) Σ_r B[r, part] K_r`` (the tableaux of
    :func:`_tableaux`; ``part`` 0 for the first ``nsplit`` entries of x). ``K_0`` is row ``k0`` of ``K`` (a loop
    that keeps ẋ at the step's end for the next step's first stage alternates rows), ``K_r`` row r after it."""
    final = s == TABLEAU_STAGES[method]
    scale = h / TABLEAU_DIV[method] if final else h
    for j in range(x.shape[0]):
        part = 0 if j < nsplit else 1
        acc = 0.0
        for r in range(s):
            a = TABLEAU_B[method, r, part] if final else TABLEAU_A[method, s, r, part]
            if a != 0.0:
                acc += a * K[k0 if r == 0 else r, j]
        xt[j] = x[j] + scale * acc


@njit(**COMPILED, inline="always")
def all_finite(x):
    """Whether every entry of the state x is finite (the loops' check after each step)."""
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return False
    return True
