"""The numba-compiled kernels. Importing them registers the notice shown while numba compiles the package's code
for this machine (:mod:`multibody.compile_notice`)."""
from multibody.compile_notice import install as _install_compile_notice

_install_compile_notice()
