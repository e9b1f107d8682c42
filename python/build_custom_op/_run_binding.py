"""_run_binding - libruncustomop through ctypes: the library's one load, its
functions' declarations, the copies of include/runcustomop.h's structures
and constants, and RunError, which every failure of the library becomes.

runner.py (runner.Library and the op call), _profile.py (profiles) and
_host_ops.py (the bridge of host ops) use the one library loaded here.  The
library is looked up as libbuildcustomop is (see _library.py): the source
tree (after ``make``), the install prefix (``make install``), then the path
in the environment variable RUN_CUSTOM_OP_LIBRARY.
"""

import ctypes
import os
import threading

from build_custom_op._library import load as _load_library, LibraryNotFound as _LibraryNotFound

LIBRARY_FILE = 'libruncustomop.so'
LIBRARY_VARIABLE = 'RUN_CUSTOM_OP_LIBRARY'

# include/runcustomop.h
_MAX_RANK = 8
_MAX_ARGUMENTS = 10
_NAME_SIZE = 64
_MESSAGE_SIZE = 12288
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


class _Tensor(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int), ('rank', ctypes.c_int),
                ('sizes', ctypes.c_int64 * _MAX_RANK), ('strides', ctypes.c_int64 * _MAX_RANK),
                ('data', ctypes.c_void_p)]


class _Argument(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('tensor', _Tensor), ('integer', ctypes.c_longlong),
                ('real', ctypes.c_double), ('text', ctypes.c_char_p)]


class _Error(ctypes.Structure):
    _fields_ = [('status', ctypes.c_int), ('core', ctypes.c_int), ('signal', ctypes.c_int),
                ('argument', ctypes.c_int), ('op', ctypes.c_char * _NAME_SIZE),
                ('message', ctypes.c_char * _MESSAGE_SIZE)]


_PRINT_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                   ctypes.c_size_t)
_WARN_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class _Options(ctypes.Structure):
    _fields_ = [('cores', ctypes.c_int), ('core_stack', ctypes.c_size_t),
                ('timeout', ctypes.c_double), ('print', _PRINT_FUNCTION),
                ('warn', _WARN_FUNCTION), ('context', ctypes.c_void_p),
                ('output_checks', ctypes.c_int),
                ('threads', ctypes.c_int), ('stop_on_interrupt', ctypes.c_int)]


class _TensorDescription(ctypes.Structure):
    _fields_ = [('on_host', ctypes.c_int), ('device', ctypes.c_char_p), ('strided', ctypes.c_int),
                ('layout', ctypes.c_char_p), ('dtype', ctypes.c_int),
                ('dtype_name', ctypes.c_char_p), ('rank', ctypes.c_int),
                ('sizes', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('computed', ctypes.c_int)]


class _DtypeInfo(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('code', ctypes.c_int), ('size', ctypes.c_int)]


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


def _declare(library):
    library.rco_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Options),
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Error)]
    library.rco_open.restype = ctypes.c_int
    library.rco_close.argtypes = [ctypes.c_void_p]
    library.rco_close.restype = None
    for name in ('rco_core_count', 'rco_op_count'):
        getattr(library, name).argtypes = [ctypes.c_void_p]
        getattr(library, name).restype = ctypes.c_int
    for name in ('rco_op_name', 'rco_op_kinds', 'rco_op_signature'):
        getattr(library, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
        getattr(library, name).restype = ctypes.c_char_p
    library.rco_print_buffer_size.argtypes = [ctypes.c_void_p]
    library.rco_print_buffer_size.restype = ctypes.c_long
    library.rco_run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_Argument),
                                ctypes.c_int, ctypes.POINTER(_Tensor), ctypes.c_double,
                                ctypes.POINTER(_Error)]
    library.rco_run.restype = ctypes.c_int
    library.rco_version.argtypes = []
    library.rco_version.restype = ctypes.c_char_p
    library.rco_device_dtype.argtypes = [ctypes.c_int]
    library.rco_device_dtype.restype = ctypes.POINTER(_DtypeInfo)
    library.rco_fill_unwritten.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    library.rco_fill_unwritten.restype = ctypes.c_int
    library.rco_describe_argument.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                              ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    library.rco_describe_argument.restype = ctypes.c_size_t
    library.rco_check_arguments.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                            ctypes.POINTER(_Argument), ctypes.c_int,
                                            ctypes.POINTER(_Tensor), ctypes.POINTER(_Error)]
    library.rco_check_arguments.restype = ctypes.c_int
    library.rco_output_checks_default.argtypes = [ctypes.POINTER(ctypes.c_int),
                                                  ctypes.POINTER(_Error)]
    library.rco_output_checks_default.restype = ctypes.c_int
    library.rco_accept_tensor.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int, ctypes.POINTER(_TensorDescription),
                                          ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_Error)]
    library.rco_accept_tensor.restype = ctypes.c_int


_shared = None
_shared_lock = threading.Lock()


def _load():
    """libruncustomop, loaded on first use (RunError of kind 'system' when
    no candidate loads)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            try:
                _shared = _load_library(LIBRARY_FILE, LIBRARY_VARIABLE, _declare)
            except _LibraryNotFound as error:
                raise RunError(str(error), kind='system') from None
        return _shared


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


def _after_fork():
    """In the child of fork(): a lock another thread of the parent held is
    held for ever here; the child gets a new one."""
    global _shared_lock
    _shared_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _run_error(status, core, signal, op, message):
    """The RunError of a struct rco_error's fields (op and message as str)."""
    return RunError(message, core=None if core < 0 else core, op=op or None,
                    kind=_STATUS_NAMES.get(status, 'system'), signal=signal or None)


def _error_of(error):
    return _run_error(error.status, error.core, error.signal,
                      error.op.decode(errors='replace'), error.message.decode(errors='replace'))
