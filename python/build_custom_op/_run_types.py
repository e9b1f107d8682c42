"""_run_types - the copies of include/runcustomop.h's structures, and the
declarations of libruncustomop's functions (their argument and result
types), which _run_binding._load makes on the library it loads.  Kept apart
from the library's load: defining ctypes structures takes a while, and the
bridge of host ops (_host_ops.py) needs none of them."""

import ctypes

# include/runcustomop.h's sizes.
_MAX_RANK = 8
_MAX_ARGUMENTS = 10
_NAME_SIZE = 64
_MESSAGE_SIZE = 12288


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


def declare(library):
    """Declares the functions of library (a ctypes.CDLL of libruncustomop);
    AttributeError when one is missing."""
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

