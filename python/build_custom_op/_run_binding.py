"""_run_binding - libruncustomop through ctypes: the library with its
functions declared, include/runcustomop.h's constants, and RunError, which
every failure of the library becomes.  The copies of the header's
structures and the functions' declarations are _run_types.py's, made when
_load() first gives the library.

runner.py (runner.Library and the op call) and _profile.py (profiles) use
the library given here, and _host_ops.py (the bridge of host ops) the same
load of it (_library.shared), without this module: the bridge takes the
functions' addresses alone.  The library is looked up as libbuildcustomop
is (see _library.py): the source tree (after ``make``), the install prefix
(``make install``), then the path in the environment variable
RUN_CUSTOM_OP_LIBRARY.
"""

import ctypes

from build_custom_op import _library

LIBRARY_FILE = _library.RUNNER_FILE
LIBRARY_VARIABLE = _library.RUNNER_VARIABLE

# include/runcustomop.h (its sizes are _run_types.py's)
_DEFAULT_TIMEOUT = -1.0
_TENSOR, _INTEGER, _REAL, _LARGE_INTEGER = range(4)
_STATUS_NAMES = {1: 'usage', 2: 'argument', 3: 'build', 4: 'op', 5: 'timeout', 6: 'unusable',
                 7: 'system', 8: 'interrupted'}
_TIMEOUT, _INTERRUPTED = 5, 8


class RunError(RuntimeError):
    """An op that could not run, or failed on a core (a RuntimeError).

    message is the library's (one line per failed core, e.g. "core 3: op
    relu: segmentation fault (SIGSEGV) ..."); core is the first core it is
    about (an int) or None; op is the op's name or None.  kind says what
    went wrong: 'usage', 'argument' (the arguments do not fit the op's
    schema), 'build' (the build cannot be used), 'op' (the op failed on a
    core), 'timeout', 'interrupted' (Ctrl-C stopped it, in a thread other
    than Python's main thread, where KeyboardInterrupt is raised instead),
    'unusable' (a call was stopped earlier, or the process forked since the
    library was opened, and its cores could not be started again: the
    message says why) or 'system'.
    """

    __module__ = 'build_custom_op.runner'  # its public name, in messages and tracebacks

    def __init__(self, message, core=None, op=None, kind='op', signal=None):
        super().__init__(message)
        self.message = message
        self.core = core
        self.op = op
        self.kind = kind
        self.signal = signal


# enum rco_output_checks
_OUTPUT_CHECKS = {'error': 1, 'warn': 2, 'off': 3}


def _output_checks_from_environment():
    """'error', 'warn' or 'off': the output checks that a build opened
    without output_checks gets from $BUILD_CUSTOM_OP_OUTPUT_CHECKS, as the
    library reads it (rco_output_checks_default); None for a value the
    library refuses (opening a build then fails, saying so)."""
    mode = ctypes.c_int()
    if _load().rco_output_checks_default(ctypes.byref(mode), None) != 0:
        return None
    return next(name for name, number in _OUTPUT_CHECKS.items() if number == mode.value)


# Whether the shared library's functions are declared; set by _declare,
# which _library.shared runs under its lock.
_declared = False


def _declare(library):
    global _declared
    if not _declared:
        from build_custom_op import _run_types
        _run_types.declare(library)
        _declared = True


def _load():
    """libruncustomop (the process's one load of it, _library.shared) with
    its functions declared (_run_types.declare, which a candidate must
    accept); RunError of kind 'system' when no candidate loads."""
    try:
        return _library.shared(LIBRARY_FILE, LIBRARY_VARIABLE, _declare)
    except _library.LibraryNotFound as error:
        raise RunError(str(error), kind='system') from None


def _dtypes():
    """The device dtypes as the library's table gives them, in the order
    messages list them: a list of (name, enum rco_dtype number, size)."""
    shared = _load()
    table = []
    while True:
        info = shared.rco_device_dtype(len(table))
        if not info:
            return table
        table.append((info.contents.name.decode(), info.contents.code, info.contents.size))


def _run_error(status, core, signal, op, message):
    """The RunError of a struct rco_error's fields (op and message as str)."""
    return RunError(message, core=None if core < 0 else core, op=op or None,
                    kind=_STATUS_NAMES.get(status, 'system'), signal=signal or None)


def _error_of(error):
    return _run_error(error.status, error.core, error.signal,
                      error.op.decode(errors='replace'), error.message.decode(errors='replace'))
