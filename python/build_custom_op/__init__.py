"""build_custom_op - build GPSIMD custom operators from Python.

A drop-in replacement for the Neuron SDK's ``build_custom_op`` module: the
same ``compile()`` with the same signature, over libbuildcustomop (the
library behind the build-custom-op command) through ctypes.  Callers switch
by changing the import path; the outputs, file names and command lines are
those of build-custom-op.

    import build_custom_op
    libs = build_custom_op.compile('relu', ['relu'], ['relu.cpp'],
                                   ['my_ops::relu(Tensor x) -> Tensor'],
                                   'build')

``python3 -m build_custom_op`` runs the build-custom-op program (see
build-custom-op(1)), and main() runs it from Python.

The shared library is looked up, in this order: next to this module in the
source tree (the repository's libbuildcustomop.so, built by ``make``; an
installed copy of the module skips this), the install prefix (``make
install`` records it), then the path in the environment variable
BUILD_CUSTOM_OP_LIBRARY.

Builds in one process run one at a time; the library keeps nothing between
calls and puts signal dispositions back before it returns.

This file is the package's face: each name is defined in the module of its
job (see __all__ below and HACKING.md's map).
"""

from build_custom_op._errors import BuildError, BuildWarning
from build_custom_op._build_binding import LIBRARY_VARIABLE, library_path
from build_custom_op._compile import compile, generate_wrapper
from build_custom_op._cli import PROGRAM, PROGRAM_VARIABLE, main, program_path
from build_custom_op._profile import profile, Profile, CoreProfile, Hint, kinds

__version__ = '0.21.2.0'
versions = {
    'ulib_to_ucode_version': '1.21.1.0',
    'ulib_to_isa_version': '1.0.2520.0',
}

__all__ = ['compile', 'generate_wrapper', 'library_path', 'BuildError', 'BuildWarning',
           'main', 'versions', '__version__', 'profile', 'Profile', 'CoreProfile', 'Hint',
           'kinds']
