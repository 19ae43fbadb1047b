"""Python source of generated numba modules, from sympy expressions.

The generated code of the package — a Model's symbolic equations (``symbolic/codegen.py``), a derived DAE
(``symbolic/dae.py``), the kinematics of general joints (``kernels/general_joint.py``) — is written by one printer
(:class:`NumbaPrinter`: plain float literals, ``math`` functions, small integer powers as products) and one
writer of function bodies with the common subexpressions eliminated (:func:`function_body`). The modules are
kept on disk by :func:`multibody.cache.import_generated`. sympy is imported by this module: import it only where
code is generated.
"""
import textwrap

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["NumbaPrinter", "function_body"]


class NumbaPrinter(PythonCodePrinter):
    """Python/math printer for numba: plain float literals, ``math`` functions."""

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Rational(self, expr):
        return f"({float(expr.p)!r}/{float(expr.q)!r})"

    def _print_Pow(self, expr, rational=False):
        b, e = expr.as_base_exp()
        if e.is_Integer and 1 < int(e) <= 4:
            base = self.parenthesize(b, PRECEDENCE["Mul"] + 1)
            return "(" + "*".join([base] * int(e)) + ")"
        if e.is_Integer and int(e) == -1:
            return f"(1.0/{self.parenthesize(b, PRECEDENCE['Mul'] + 1)})"
        if e == sp.Rational(1, 2):
            return f"math.sqrt({self._print(b)})"
        if e == -sp.Rational(1, 2):
            return f"(1.0/math.sqrt({self._print(b)}))"
        return super()._print_Pow(expr, rational=rational)


def function_body(assignments, outputs, indent="    "):
    """The statements of a generated function: ``assignments`` (source lines, e.g. unpacking the arguments), then
    the common subexpressions of ``outputs`` (a list of (target, sympy expression); ``sympy.cse``) and one
    ``target = expression`` line per output, indented by ``indent``."""
    printer = NumbaPrinter({"fully_qualified_modules": True, "standard": "python3"})
    exprs = [e for _, e in outputs]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_c"), optimizations="basic")
    lines = list(assignments)
    for s, e in reps:
        lines.append(f"{s} = {printer.doprint(e)}")
    for (target, _), e in zip(outputs, reduced):
        lines.append(f"{target} = {printer.doprint(e)}")
    return textwrap.indent("\n".join(lines), indent)
