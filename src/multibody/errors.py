"""Exceptions of multibody.

Every message names the offending element (body, joint, parameter, constraint) and says what was expected.
"""


def shown(value):
    """``value`` as a message shows it (``f"{shown(x)!r}"``): numpy scalars and arrays as the Python numbers and
    lists they hold (``0.0``, not ``np.float64(0.0)``; ``[1.0, 2.0]``, not ``array([1., 2.])``), inside tuples and
    lists too; anything else as it is. (numpy is not imported: its objects are known by their module.)"""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(shown(v) for v in value)
    return value


class MultibodyError(Exception):
    """Base class of every error raised by multibody."""


class ModelError(MultibodyError, ValueError):
    """An invalid model description: a body, joint, force, parameter or file.

    ``element`` names the offending element (e.g. ``"body 'link1'"``), when known.
    """

    def __init__(self, message, element=None):
        super().__init__(message)
        self.element = element


class ConstraintError(MultibodyError):
    """A constraint that cannot be satisfied, is singular, or whose initial values are inconsistent.

    ``time`` and ``joints`` locate the failure when known.
    """

    def __init__(self, message, time=None, joints=()):
        super().__init__(message)
        self.time = time
        self.joints = tuple(joints)


class IntegrationError(MultibodyError, RuntimeError):
    """A failed integration. ``result`` carries what was computed up to the failure, ``reason`` says why;
    ``element`` names what failed when one element did (a joint that chatters on its stops, a torque law that
    raised), else None."""

    def __init__(self, message, result=None, reason=None, element=None):
        super().__init__(message)
        self.result = result
        self.reason = reason if reason is not None else message
        self.element = element


class ConvergenceError(MultibodyError, RuntimeError):
    """An iterative solve (a static equilibrium, ...) that did not converge. ``result`` carries what it computed
    (the last iterate, with its ``info``), ``element`` the coordinate or element whose residual is the worst."""

    def __init__(self, message, result=None, element=None):
        super().__init__(message)
        self.result = result
        self.element = element


class SweepError(MultibodyError, RuntimeError):
    """A parameter sweep that could not go on: its workers were lost repeatedly or its cluster is unreachable.

    The points that finished are kept in the sweep's table; ``resume=True`` computes the others.
    """


class ConvergenceWarning(UserWarning):
    """An iterative solve of a run (a Newton projection onto the constraints, an impact's problem) that stopped
    before its tolerance: the run goes on from the last iterate, and ``result.info`` records the worst residual and
    the iterations (one warning per run and solve, naming it)."""


class ModelWarning(UserWarning):
    """Something in a model description that was read but not used, or kept as written although it is suspect: the
    warning names each element (one warning per file or model)."""


class InertiaWarning(ModelWarning):
    """Inertias that no body has (the triangle inequality fails, a massless body has inertia), kept as written or
    moved to the nearest physical ones: one warning per model (or file) naming each body or link and the numbers
    (``multibody.model.inertia``)."""


class MeshWarning(ModelWarning):
    """Mesh files of a robot description that were not found: kept by their names (one warning per file read)."""


class ConvergenceWarning(UserWarning):
    """An iterative solve that stopped before it converged (its iterations used up, or no step improving): the result
    it returns holds what it reached and its ``info`` the worst residual and the iterations."""


class ResultFileError(ModelError, OSError):
    """A file of a run — a Result file (``.npz``, ``.csv``, ``.h5``) or a checkpoint — that cannot be read or
    written: missing, a folder, truncated, foreign, damaged, or in a place that cannot be written.

    ``element`` (and ``path``) name the file. A ``ModelError`` as before (callers that caught a foreign file as
    ``ModelError`` or ``ValueError`` still do) and an ``OSError`` (callers that caught a missing or unwritable file
    as ``OSError`` still do).
    """

    def __init__(self, message, path=None, element=None):
        super().__init__(message, element=element if element is not None else (None if path is None else str(path)))
        self.path = None if path is None else str(path)
