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
job (see HACKING.md's map), which is imported when the name is first used,
so that importing the package costs little.
"""

from build_custom_op._errors import BuildError, BuildWarning

__version__ = '0.21.2.0'
versions = {
    'ulib_to_ucode_version': '1.21.1.0',
    'ulib_to_isa_version': '1.0.2520.0',
}

__all__ = ['compile', 'generate_wrapper', 'library_path', 'BuildError', 'BuildWarning',
           'main', 'versions', '__version__', 'profile', 'Profile', 'CoreProfile', 'Hint',
           'kinds']

# The other names, and the module of each.
_MODULES = {'compile': '_compile', 'generate_wrapper': '_compile',
            'library_path': '_build_binding', 'LIBRARY_VARIABLE': '_build_binding',
            'main': '_cli', 'program_path': '_cli', 'PROGRAM': '_cli', 'PROGRAM_VARIABLE': '_cli',
            'profile': '_profile', 'Profile': '_profile', 'CoreProfile': '_profile',
            'Hint': '_profile', 'kinds': '_profile'}


def __getattr__(name):
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'build_custom_op' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f'build_custom_op.{module}'), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULES))
