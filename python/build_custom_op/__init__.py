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

This file is the package's face: each name but the errors is defined in
the module of its job (see HACKING.md's map), which is imported when the
name is first used, so that importing the package costs little.
"""


# The exceptions and warnings of compile() and generate_wrapper(), defined here
# (not imported: every module of the package may name them).
class BuildError(Exception):
    """A build that did not succeed, with the library's full message.

    kind is one of 'input' (a bad schema, name, file or value), 'usage' (a
    malformed request), 'tool' (a tool or SDK file is missing), 'step' (a
    compile, link or pack step failed: the message holds the command and its
    output), 'interrupted' and 'system'.  schema_index (0-based) and column
    (1-based) point into the schema a schema error is about, else None.
    signal is the signal that interrupted the build, else None.
    """

    __module__ = 'build_custom_op'

    def __init__(self, message, kind='input', schema_index=None, column=None, signal=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.schema_index = schema_index
        self.column = column
        self.signal = signal


class BuildWarning(UserWarning):
    """A warning about the input of a build (compile() issues it)."""

    __module__ = 'build_custom_op'


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
