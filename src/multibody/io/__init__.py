"""Files: YAML/JSON model files (schema, validation, safe expressions), URDF import, Result files.

================================  ====================================================================
``load_model(path, ...)``         the Model of a ``.yaml``/``.yml``/``.json`` model file, a ``.urdf`` robot or an MJCF
                                  ``.xml`` (MuJoCo's models)
``load(path)``                    a model file with its initial state and simulation settings (``ModelFile``)
``save_model(model, path, ...)``  write a model file (YAML or JSON by the extension)
``validate_file(path)``           every problem of a file, with its path in the file (``Problem``)
``load_urdf(path, ...)``          a URDF robot description as a Model
``load_mjcf(path, ...)``          a MuJoCo model (MJCF) as a Model (``multibody.io.mjcf``: states to and from MuJoCo)
``srdf_disabled_pairs(path, m)``  the link pairs an SRDF disables, as body names (for ``mb.collisions``)
``save_result(result, path)``     a ``Result`` as ``.npz``, ``.csv`` or ``.h5`` (HDF5, with h5py)
``schema()``                      the JSON Schema of model files (``model.schema.json``)
================================  ====================================================================

Model files are data: YAML is read with the safe loader (YAML 1.2's plain scalars) after its tags are checked,
formulas are parsed by the allow-list of :mod:`multibody.io.expressions`, nothing is evaluated as Python. Inertias
that no body has: ``strict=True`` refuses them, ``repair=True`` repairs them (``multibody.model.inertia``).
"""
from multibody.io.documents import ModelFileError, Problem, schema
from multibody.io.expressions import Expression, parse_expression
from multibody.io.expression_callables import ExpressionTorque
from multibody.io.model_files import ModelFile, load, load_model, load_text, model_from_dict, validate_file
from multibody.io.writer import model_to_dict, save_model

__all__ = ["load_model", "save_model", "load", "load_text", "validate_file", "load_urdf", "ModelFile", "Problem",
           "ModelFileError", "model_from_dict", "model_to_dict", "schema", "parse_expression", "Expression",
           "ExpressionTorque", "save_result", "load_result", "srdf_disabled_pairs", "load_mjcf"]


def __getattr__(name):   # the URDF and MJCF readers and the Result files are imported when first used
    if name == "load_urdf":
        from multibody.io.urdf import load_urdf

        return load_urdf
    if name == "load_mjcf":
        from multibody.io.mjcf import load_mjcf

        return load_mjcf
    if name == "srdf_disabled_pairs":
        from multibody.io.srdf import srdf_disabled_pairs

        return srdf_disabled_pairs
    if name in ("save_result", "load_result"):
        from multibody.io import results

        return getattr(results, name)
    raise AttributeError(f"module 'multibody.io' has no attribute '{name}'")
