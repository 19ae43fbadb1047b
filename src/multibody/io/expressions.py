"""Safe arithmetic expressions in model files: time-varying efforts, constraint functions, profiles, constants.

A model file is data: it is never executed. Where a file gives a formula (a joint effort ``"2*sin(3*t)"``, a
constant ``"pi/2"``, a profile ``"x**2/2"``), the text is parsed with Python's :mod:`ast` (``mode="eval"``)
and the tree is checked against an allow-list before anything else happens; the accepted tree is then turned
into a closure (numbers) or a sympy expression (profiles). ``eval``, ``exec`` and ``compile`` are never called.

Allowed:

* decimal numbers (``2``, ``0.5``, ``1e-3``; not ``0x10``, ``0o17``, ``1_000``, ``1j``), the constant ``pi``;
* the names of the context: ``t`` (time), ``q.<joint>.<coordinate>`` and ``v.<joint>.<velocity>`` (entries of
  the model's q and v by their names, :meth:`multibody.Model.coordinate_names` and
  :meth:`~multibody.Model.velocity_names`; ``q.<joint>`` / ``v.<joint>`` for a joint with one coordinate),
  ``x``, ``z`` in a profile;
* ``+ - * / **``, unary minus and plus, parentheses;
* calls of ``sin cos tan exp sqrt abs`` (one argument) and ``min max`` (two or more).

Anything else — attribute access other than a coordinate name, subscripts, comparisons, lambdas,
comprehensions, strings, keyword arguments, other functions — is a ``ModelError`` naming where the expression
is in the file and what was found. ``abs``, ``min`` and ``max`` compare real parts, so a complex step through
an expression gives its exact derivative (as ``UserConstraint`` uses).

Example
-------
>>> e = parse_expression("-10*(q.hinge - 0.5) - 2*v.hinge + sin(t)", "joints[0].effort")
>>> sorted(e.names)
['q.hinge', 't', 'v.hinge']
>>> f = e.function({"t": ("t", 0), "q.hinge": ("q", 0), "v.hinge": ("v", 0)})
>>> float(f(0.0, [0.5], [1.0]))
-2.0
>>> try:
...     parse_expression("__import__('os')", "joints[0].effort")
... except ModelError as exc:
...     print(str(exc).split(' (allowed')[0])
joints[0].effort: in '__import__('os')': function '__import__' is not allowed
"""
import ast
import math
import re

import numpy as np

from multibody.errors import ModelError, shown

__all__ = ["Expression", "parse_expression", "constant", "FUNCTIONS", "CONSTANTS"]

#: the longest expression accepted (characters)
MAX_LENGTH = 4000
#: the deepest expression tree accepted (``1+1+...`` and ``sin(sin(...))`` nest one level per operation)
MAX_DEPTH = 200


def _abs(x):
    """|x| by the real part (complex-step safe)."""
    return -x if np.real(x) < 0 else x


def _min(*args):
    best = args[0]
    for a in args[1:]:
        if np.real(a) < np.real(best):
            best = a
    return best


def _max(*args):
    best = args[0]
    for a in args[1:]:
        if np.real(a) > np.real(best):
            best = a
    return best


#: name -> (numeric function, sympy function name, minimum and maximum number of arguments)
FUNCTIONS = {
    "sin": (np.sin, "sin", 1, 1), "cos": (np.cos, "cos", 1, 1), "tan": (np.tan, "tan", 1, 1),
    "exp": (np.exp, "exp", 1, 1), "sqrt": (np.sqrt, "sqrt", 1, 1), "abs": (_abs, "Abs", 1, 1),
    "min": (_min, "Min", 2, None), "max": (_max, "Max", 2, None),
}
#: named constants every expression may use
CONSTANTS = {"pi": math.pi}

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
#: how a number is written in an expression: decimal digits, an optional fraction and exponent
DECIMAL = re.compile(r"^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
#: numbers YAML 1.1 (and Python) write in other ways, which a model file does not read as numbers
_OTHER_NUMBERS = [
    (re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$"), "a sexagesimal number (YAML 1.1 reads 1:30 as 90)"),
    (re.compile(r"^[-+]?0[xX][0-9a-fA-F_]+$"), "a hexadecimal number"),
    (re.compile(r"^[-+]?0[oO]?[0-7_]+$"), "an octal number"),
    (re.compile(r"^[-+]?0[bB][01_]+$"), "a binary number"),
    (re.compile(r"^(?=.*_)[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?$"), "a number with '_' separators"),
]


def _shown(source, limit=80):
    """The source of an expression for a one-line message: line breaks written as \\n, at most ``limit``
    characters."""
    text = source.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _dotted(node):
    """``a.b.c`` -> "a.b.c" for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class Expression:
    """A checked expression: ``source`` (the text), ``where`` (its place in the file, for errors), ``names``
    (the variable names it uses, e.g. ``{"t", "q.hinge.angle"}``). Make one with :func:`parse_expression`."""

    def __init__(self, source, where, tree, names):
        self.source, self.where, self.tree, self.names = source, where, tree, frozenset(names)

    def __repr__(self):
        return f"Expression({self.source!r})"

    def __eq__(self, other):
        return isinstance(other, Expression) and self.source == other.source

    def __hash__(self):
        return hash(self.source)

    def _fail(self, message, node=None):
        col = f" (column {node.col_offset + 1})" if node is not None and hasattr(node, "col_offset") else ""
        raise ModelError(f"{self.where}: in '{_shown(self.source)}': {message}{col}", element=self.where)

    # ---- numbers -----------------------------------------------------------------------------------------
    def function(self, variables):
        """A function ``f(t, q, v) -> number`` of the expression. ``variables`` maps each name the expression
        may use to ``("t", 0)``, ``("q", index)`` or ``("v", index)``; a name it does not map is a
        ``ModelError`` listing the names it does."""
        for name in sorted(self.names):
            if name not in variables:
                self._unknown(name, variables)
        return self._closure(self.tree.body, variables)

    def _unknown(self, name, variables):
        shown = sorted(variables)
        more = f", ... ({len(shown)} names)" if len(shown) > 12 else ""
        allowed = ", ".join(shown[:12]) + more if shown else "none: a constant is expected here"
        self._fail(f"unknown name '{name}' (names allowed here: {allowed}; constants: pi)")

    def _closure(self, node, variables):
        if isinstance(node, ast.Constant):
            c = float(node.value)
            return lambda t, q, v: c
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _dotted(node)
            if name in CONSTANTS:
                c = CONSTANTS[name]
                return lambda t, q, v: c
            kind, i = variables[name]
            if kind == "t":
                return lambda t, q, v: t
            if kind == "q":
                return lambda t, q, v: q[i]
            return lambda t, q, v: v[i]
        if isinstance(node, ast.UnaryOp):
            f = self._closure(node.operand, variables)
            if isinstance(node.op, ast.USub):
                return lambda t, q, v: -f(t, q, v)
            return f
        if isinstance(node, ast.BinOp):
            f, g = self._closure(node.left, variables), self._closure(node.right, variables)
            op = type(node.op)
            if op is ast.Add:
                return lambda t, q, v: f(t, q, v) + g(t, q, v)
            if op is ast.Sub:
                return lambda t, q, v: f(t, q, v) - g(t, q, v)
            if op is ast.Mult:
                return lambda t, q, v: f(t, q, v) * g(t, q, v)
            if op is ast.Div:
                return lambda t, q, v: f(t, q, v) / g(t, q, v)

            def power(t, q, v):
                a, b = f(t, q, v), g(t, q, v)
                r = a ** b
                if type(r) is complex and not (np.iscomplexobj(a) or np.iscomplexobj(b)):
                    self._fail(f"({a!r}) ** {b!r} is not a real number (a negative base with a fractional exponent)",
                               node)
                return r

            return power
        if isinstance(node, ast.Call):
            fn = FUNCTIONS[node.func.id][0]
            args = [self._closure(a, variables) for a in node.args]
            if len(args) == 1:
                a0 = args[0]
                return lambda t, q, v: fn(a0(t, q, v))
            return lambda t, q, v: fn(*[a(t, q, v) for a in args])
        self._fail(f"{type(node).__name__} is not allowed", node)   # unreachable after _check

    def value(self):
        """The number of a constant expression (no names but ``pi``); a ``ModelError`` otherwise."""
        f = self.function({})
        try:
            with np.errstate(all="raise"):
                x = f(0.0, (), ())
        except ModelError:
            raise
        except (ArithmeticError, FloatingPointError, ValueError) as exc:
            why = {ZeroDivisionError: "a division by zero", OverflowError: "beyond the floating-point range"}.get(
                type(exc), str(exc))
            self._fail(f"cannot be evaluated ({why})")
        if np.iscomplexobj(x):
            self._fail(f"is not a real number ({x})")
        x = float(x)
        if not math.isfinite(x):
            self._fail(f"is not finite ({x})")
        return x

    # ---- sympy ---------------------------------------------------------------------------------------------
    def sympy(self, symbols):
        """The expression in sympy, ``symbols`` mapping each name to a sympy expression; integer literals stay
        integers (so ``x**2`` is a polynomial). Powers need a constant integer exponent of at most 64."""
        import sympy as sp

        for name in sorted(self.names):
            if name not in symbols:
                self._unknown(name, symbols)

        def conv(node):
            if isinstance(node, ast.Constant):
                return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(node.value)
            if isinstance(node, (ast.Name, ast.Attribute)):
                name = _dotted(node)
                return sp.pi if name in CONSTANTS else symbols[name]
            if isinstance(node, ast.UnaryOp):
                x = conv(node.operand)
                return -x if isinstance(node.op, ast.USub) else x
            if isinstance(node, ast.BinOp):
                a = conv(node.left)
                if isinstance(node.op, ast.Pow):
                    e = conv(node.right)
                    if not (e.is_Integer and abs(int(e)) <= 64):
                        self._fail("a power here must have a constant integer exponent of at most 64", node)
                    return a ** e
                b = conv(node.right)
                op = type(node.op)
                return a + b if op is ast.Add else a - b if op is ast.Sub else a * b if op is ast.Mult else a / b
            fn = getattr(sp, FUNCTIONS[node.func.id][1])
            return fn(*[conv(a) for a in node.args])

        return conv(self.tree.body)


def _check(expr, node):
    """Walk the tree: every node must be in the allow-list (see the module docstring); collect the names."""
    names = set()

    def walk(n):
        if isinstance(n, ast.Constant):
            if type(n.value) not in (int, float):
                expr._fail(f"the constant {shown(n.value)!r} is not a number", n)
            written = ast.get_source_segment(expr.source, n) or ""
            if not DECIMAL.match(written):
                expr._fail(f"the number '{_shown(written, 40)}' is not written in decimal digits (as 16, 0.5 or 1e-3)",
                           n)
            if isinstance(n.value, int) and abs(n.value) > 2**53:
                expr._fail(f"the integer {_shown(written, 20)} is too large", n)
            return
        if isinstance(n, (ast.Name, ast.Attribute)):
            name = _dotted(n)
            if name is None:
                expr._fail("attribute access is only allowed in coordinate names (q.<joint>.<coordinate>)", n)
            if not isinstance(getattr(n, "ctx", ast.Load()), ast.Load):
                expr._fail("assignment is not allowed", n)
            if any(part.startswith("_") for part in name.split(".")):
                expr._fail(f"the name '{name}' is not allowed (names must not start with '_')", n)
            if name in FUNCTIONS:
                expr._fail(f"'{name}' is a function: call it, as in {name}(t)", n)
            if name not in CONSTANTS:
                names.add(name)
            return
        if isinstance(n, ast.UnaryOp):
            if not isinstance(n.op, (ast.USub, ast.UAdd)):
                expr._fail(f"the operator {type(n.op).__name__} is not allowed (allowed: + - * / **)", n)
            walk(n.operand)
            return
        if isinstance(n, ast.BinOp):
            if type(n.op) not in _BINOPS:
                expr._fail(f"the operator {type(n.op).__name__} is not allowed (allowed: + - * / **)", n)
            walk(n.left)
            walk(n.right)
            return
        if isinstance(n, ast.Call):
            fname = n.func.id if isinstance(n.func, ast.Name) else ast.unparse(n.func)
            if fname not in FUNCTIONS:
                expr._fail(f"function '{fname}' is not allowed (allowed: {', '.join(FUNCTIONS)})", n)
            if n.keywords or any(isinstance(a, ast.Starred) for a in n.args):
                expr._fail(f"{fname}() takes plain arguments only", n)
            lo, hi = FUNCTIONS[fname][2:]
            if len(n.args) < lo or (hi is not None and len(n.args) > hi):
                want = f"{lo}" if lo == hi else f"at least {lo}"
                expr._fail(f"{fname}() takes {want} argument{'s' if lo > 1 or hi is None else ''}, "
                           f"got {len(n.args)}", n)
            for a in n.args:
                walk(a)
            return
        expr._fail(f"{type(n).__name__} is not allowed (allowed: numbers, names, + - * / **, "
                   f"{', '.join(FUNCTIONS)})", n)

    walk(node)
    return names


def _depth(node):
    """The depth of an expression tree (without recursion: the checks and conversions that follow recurse)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if d <= MAX_DEPTH:
            stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


def parse_expression(source, where="expression"):
    """Parse and check ``source`` (a string or a number); returns an :class:`Expression`. ``where`` names the
    place in the file for error messages (e.g. ``"joints[2].effort"``)."""
    if isinstance(source, bool) or not isinstance(source, (str, int, float)):
        raise ModelError(f"{where}: expected a number or an expression (a string), got {source!r}", element=where)
    try:
        text = repr(float(source)) if not isinstance(source, str) else source.strip()
    except OverflowError:   # an integer beyond the floats (10**400)
        raise ModelError(f"{where}: the number {str(source)[:20]}... is too large", element=where) from None
    probe = Expression(text, where, None, ())
    if not text:
        probe._fail("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise ModelError(f"{where}: the expression has {len(text)} characters (at most {MAX_LENGTH})", element=where)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        why = f"syntax error: {exc.msg}" + (f" (column {exc.offset})" if exc.offset else "")
        tree = None
    except (ValueError, RecursionError, MemoryError) as exc:
        why = f"cannot be parsed: {type(exc).__name__}"
        tree = None
    if tree is None:
        probe._fail(why)
    depth = _depth(tree.body)
    if depth > MAX_DEPTH:
        probe._fail(f"the expression is nested {depth} levels deep (at most {MAX_DEPTH})")
    names = _check(probe, tree.body)
    return Expression(text, where, tree, names)


def constant(value, where):
    """A number given in a file: a number, or a constant expression such as ``"pi/2"`` or ``"1/12"``. A string that
    YAML 1.1 would have read as a number (``1:30``, ``0x10``, ``1_000``) is refused by name."""
    if isinstance(value, str):
        text = value.strip()
        for pattern, what in _OTHER_NUMBERS:
            if pattern.match(text):
                raise ModelError(f"{where}: '{_shown(text, 40)}' is {what}, which a model file does not read as a "
                                 "number: write it in decimal digits (as 90, 0.5 or 1e-3)", element=where)
    if isinstance(value, bool):
        raise ModelError(f"{where}: expected a number, got {shown(value)!r}", element=where)
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:   # an integer beyond the floats (10**400)
            raise ModelError(f"{where}: the number {str(value)[:20]}... is too large", element=where) from None
        if not math.isfinite(x):
            raise ModelError(f"{where}: expected a finite number, got {shown(value)!r}", element=where)
        return x
    return parse_expression(value, where).value()
