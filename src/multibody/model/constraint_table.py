"""The compiled constraint elements of a Model packed into flat arrays at build time (``model.constraint_table``,
read by ``multibody.kernels.constraints``; docs/model-arrays.md), with the rows of every constraint."""
from dataclasses import dataclass

import numpy as np

from multibody.model.constraints import ELEMENT_AUX, ELEMENT_LEVELS, ELEMENT_ROWS
from multibody.model.placement import Placement

__all__ = ["ConstraintTable", "identity_frames"]


# packing for the compiled kernels
@dataclass(frozen=True)
class ConstraintTable:
    """The compiled constraint elements of a Model as flat arrays (read by ``multibody.kernels.constraints``).

    ``ci`` (ne, 8) int64 per element: code, body a, body b, first row, number of rows, first auxiliary
    variable, number of auxiliary variables, first float parameter; ``cf`` the float parameters;
    ``pi`` (np, 2) int64 per profile: first term and number of terms of ``pt`` (K, 3) (i, j, c: c xⁱ zʲ).
    ``owner`` (m,) the index in ``model.constraints`` of each row's constraint; ``level`` (m,) 2 for a
    position row, 1 for a velocity row; ``m`` rows in all (compiled rows first, then the Python rows);
    ``m_compiled`` compiled rows; ``naux`` auxiliary variables; ``python`` the Python constraints with their
    first row.
    """

    ci: np.ndarray
    cf: np.ndarray
    pi: np.ndarray
    pt: np.ndarray
    owner: np.ndarray
    level: np.ndarray
    m: int
    m_compiled: int
    naux: int
    python: tuple
    row_names: tuple
    slices: dict

    @classmethod
    def build(cls, constraints, index, frames):
        """Pack ``constraints`` (bound: Python ones already sized); ``index(name, c)`` gives a body index,
        ``frames(i)`` the Placement of body i's user frame in its internal frame."""
        ci, cf, profiles, owner, level, names = [], [], [], [], [], []
        slices = {}
        row = aux = 0
        for k, c in enumerate(constraints):
            if c.python:
                continue
            start = row
            for item in c._pack(index, frames):
                code, a, b, params = item[:4]
                if len(item) > 4:
                    profiles.append(item[4])
                    params = list(params) + [float(len(profiles) - 1)]
                nr = ELEMENT_ROWS[code]
                na = ELEMENT_AUX.get(code, 0)
                ci.append([code, a, b, row, nr, aux, na, len(cf)])
                cf.extend(float(p) for p in params)
                level.extend(ELEMENT_LEVELS[code])
                owner.extend([k] * nr)
                row += nr
                aux += na
            names += c.row_names()
            slices[c.name] = slice(start, row)
        m_compiled = row
        python = []
        for k, c in enumerate(constraints):
            if not c.python:
                continue
            python.append((c, row))
            level.extend(c.levels)
            owner.extend([k] * c.nrows)
            names += c.row_names()
            slices[c.name] = slice(row, row + c.nrows)
            row += c.nrows
        pi = np.zeros((len(profiles), 2), dtype=np.int64)
        terms = []
        for p, prof in enumerate(profiles):
            pi[p] = len(terms), len(prof.terms)
            terms += prof.terms.tolist()
        arr = lambda x, dt: np.ascontiguousarray(np.asarray(x, dtype=dt))  # noqa: E731
        out = cls(ci=arr(ci, np.int64).reshape(-1, 8), cf=arr(cf, np.float64), pi=pi,
                  pt=arr(terms, np.float64).reshape(-1, 3), owner=arr(owner, np.int64), level=arr(level, np.int64),
                  m=row, m_compiled=m_compiled, naux=aux, python=tuple(python), row_names=tuple(names),
                  slices=slices)
        for a in (out.ci, out.cf, out.pi, out.pt, out.owner, out.level):
            a.flags.writeable = False
        return out


def identity_frames(_i):
    return Placement()
