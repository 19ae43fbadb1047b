"""``multibody forces SYSTEM [--order q3,q2,q1] [--numeric] [--latex]``: the centrifugal / Coriolis /
gyroscopic split of a bundled system's generalized inertial forces (seed 004, Telegin 2024).

SYSTEM is one of the six manipulators of the paper (``multibody.systems.manipulators``): ``polar``,
``cartesian``, ``cylindrical3``, ``cylindrical4``, ``angular``, ``universal``. Printed: the mass matrix H
(lower triangle), then for each coordinate the centrifugal h_c (eq. 2), Coriolis h_o (eq. 3) and
gyroscopic h_g (eq. 5) forces, the gyroscopic power q̇ᵀ h_g (0), the gravity forces g(q), the table of generalized coordinates (ТОК,
which coordinates each element of H depends on) and the bodies that generate each force (statement 2).
The parameters are symbols named as in the paper (``--numeric``: the default numbers); ``--order`` changes
the coordinate order of the split (it depends on it, see ``multibody.symbolic.inertial_forces``);
``--latex`` prints the equations as LaTeX. Examples::

    multibody forces universal
    multibody forces cartesian --order q3,q2,q1
    multibody forces angular --latex
"""
SYSTEMS = ("polar", "cartesian", "cylindrical3", "cylindrical4", "angular", "universal")


def cli_register(subparsers):
    p = subparsers.add_parser("forces", help="centrifugal / Coriolis / gyroscopic inertial forces (seed 004)")
    p.add_argument("system", choices=SYSTEMS, help="a manipulator of seed 004")
    p.add_argument("--order", help="coordinate order of the split, e.g. q3,q2,q1 (default: base to tip)")
    p.add_argument("--numeric", action="store_true", help="the default numeric parameters instead of symbols")
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    p.set_defaults(func=run)


def run(args):
    import re

    import sympy as sp

    from multibody.symbolic.equations import equations_of_motion
    from multibody.symbolic.inertial_forces import GROUPS, split_inertial_forces
    from multibody.systems import manipulators

    model = manipulators.SYSTEMS[args.system](symbolic=not args.numeric)
    order = [x.strip() for x in args.order.split(",") if x.strip()] if args.order else None
    split = split_inertial_forces(model, order=order)
    names = {v: rf"\dot{{q}}_{{{str(q)[1:]}}}" for q, v in zip(split.q, split.qd)}
    for x in split.parameters:  # the paper's notation: I_3^y, m_{03}, a_3
        m = re.fullmatch(r"I(\d)([xyz])|m(\d+)|a(\d)", str(x))
        if m:
            names[x] = rf"I_{{{m[1]}}}^{{{m[2]}}}" if m[1] else (rf"m_{{{m[3]}}}" if m[3] else rf"a_{{{m[4]}}}")

    def show(e):
        if args.numeric:
            e = sp.nfloat(e, 6)
        return sp.latex(e, symbol_names=names) if args.latex else str(e)

    def sub(k, j):
        return f"{{{labels[k]}{labels[j]}}}" if args.latex else labels[k] + labels[j]

    n = len(split.q)
    labels = [str(q)[1:] for q in split.q]
    example = list(manipulators.SYSTEMS).index(args.system) + 1
    print(f"{model.name} (seed 004, Example {example}); coordinates {', '.join(map(str, split.q))}")
    print("mass matrix H (k >= j):")
    for k in range(n):
        for j in range(k + 1):
            if split.mass_matrix[k, j] != 0:
                print(f"  H_{sub(k, j)} = {show(split.mass_matrix[k, j])}")
    print("generalized inertial forces (eqs. 2, 3, 5):")
    for i in range(n):
        for group, letter in zip(GROUPS, "cog"):
            value = getattr(split, group)[i]
            if value != 0:
                name = f"h_{{{letter}{labels[i]}}}" if args.latex else f"h_{letter}{labels[i]}"
                print(f"  {name} = {show(value)}      ({group})")
    print(f"gyroscopic power qdᵀ h_g = {show(split.gyroscopic_power)}")
    gravity = equations_of_motion(model).gravity
    print("gravity forces g(q) (left-hand side: Q_g = τ − g):")
    for i, k in enumerate(int(str(q)[1:]) - 1 for q in split.q):
        if gravity[k] != 0:
            print(f"  g_{labels[i]} = {show(gravity[k])}")
    print("table of generalized coordinates (H_kj depends on):")
    for (k, j), used in split.dependencies.items():
        print(f"  H_{labels[k]}{labels[j]}: {', '.join(map(str, used))}")
    print("generating bodies:")
    for line in split.table().splitlines():
        print(f"  {line}")
    return 0
