"""_build_binding - libbuildcustomop through ctypes: the library's one load,
its functions' declarations, the copy of include/buildcustomop.h's struct
bco_request and its enums, and the library's errors as BuildError.

The library is looked up as _library.py says: the source tree (the
repository's libbuildcustomop.so, built by ``make``), the install prefix
(``make install`` records it), then the path in the environment variable
BUILD_CUSTOM_OP_LIBRARY.
"""

import ctypes
import os
import threading

from build_custom_op import _library
from build_custom_op import BuildError

LIBRARY_VARIABLE = _library.BUILDER_VARIABLE

# enum bco_target, enum bco_error_kind and enum bco_message_kind.
TARGETS = {'xtensa': 0, 'host': 1}
ERROR_KINDS = {1: 'input', 2: 'usage', 3: 'tool', 4: 'step', 5: 'interrupted', 6: 'system'}
MESSAGE_STATUS, MESSAGE_COMMAND, MESSAGE_OUTPUT, MESSAGE_WARNING, MESSAGE_FAILURE = range(5)

ProgressFunction = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
StringList = ctypes.POINTER(ctypes.c_char_p)


class Request(ctypes.Structure):
    """struct bco_request."""
    _fields_ = [
        ('name', ctypes.c_char_p),
        ('functions', StringList),
        ('function_count', ctypes.c_size_t),
        ('schemas', StringList),
        ('schema_count', ctypes.c_size_t),
        ('sources', StringList),
        ('source_count', ctypes.c_size_t),
        ('build_dir', ctypes.c_char_p),
        ('includes', StringList),
        ('include_count', ctypes.c_size_t),
        ('cflags', StringList),
        ('cflag_count', ctypes.c_size_t),
        ('launcher', StringList),
        ('launcher_count', ctypes.c_size_t),
        ('target', ctypes.c_int),
        ('multicore', ctypes.c_int),
        ('jobs', ctypes.c_int),
        ('dry_run', ctypes.c_int),
        ('verbose', ctypes.c_int),
        ('keep_going', ctypes.c_int),
        ('sdk', ctypes.c_char_p),
        ('core', ctypes.c_char_p),
        ('xtensa_system', ctypes.c_char_p),
        ('progress', ProgressFunction),
        ('progress_context', ctypes.c_void_p),
        ('ldflags', StringList),
        ('ldflag_count', ctypes.c_size_t),
        ('sanitize', ctypes.c_char_p),
    ]


_handle = None
_handle_lock = threading.Lock()


def _declare(library):
    void_p, c_int, size_t = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    out = ctypes.POINTER(ctypes.c_void_p)
    request = ctypes.POINTER(Request)
    signatures = {
        'bco_build': (c_int, [request, out, out]),
        'bco_generate_wrapper': (c_int, [request, out, out]),
        'bco_result_count': (size_t, [void_p]),
        'bco_result_path': (ctypes.c_char_p, [void_p, size_t]),
        'bco_result_settled_count': (size_t, [void_p]),
        'bco_result_settled_path': (ctypes.c_char_p, [void_p, size_t]),
        'bco_result_free': (None, [void_p]),
        'bco_error_kind': (c_int, [void_p]),
        'bco_error_message': (ctypes.c_char_p, [void_p]),
        'bco_error_schema_index': (c_int, [void_p]),
        'bco_error_column': (c_int, [void_p]),
        'bco_error_signal': (c_int, [void_p]),
        'bco_error_free': (None, [void_p]),
        'bco_free': (None, [void_p]),
        'bco_split_words': (c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)),
                                    ctypes.POINTER(size_t), out]),
        'bco_version': (ctypes.c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes


def load():
    """The loaded libbuildcustomop, loaded on first use."""
    global _handle
    with _handle_lock:
        if _handle is None:
            try:
                _handle = _library.load(_library.BUILDER_FILE, LIBRARY_VARIABLE, _declare)
            except _library.LibraryNotFound as error:
                raise BuildError(str(error), kind='tool') from None
        return _handle


def library_path():
    """The path of the libbuildcustomop in use (loading it if needed)."""
    return load()._name


def text(raw):
    """A string the library gave (bytes or None) as str."""
    return raw.decode('utf-8', 'replace') if raw is not None else ''


def split_words(encoded, what):
    """bco_split_words: the words of encoded (bytes) as a POSIX shell splits
    them, expanding nothing (the splitting build-custom-op does, in linear
    time).  what names the text in the BuildError of a text that cannot be
    split."""
    library = load()
    words = ctypes.POINTER(ctypes.c_char_p)()
    count = ctypes.c_size_t()
    error = ctypes.c_void_p()
    kind = library.bco_split_words(encoded, ctypes.byref(words), ctypes.byref(count),
                                   ctypes.byref(error))
    try:
        if kind != 0:
            reason = text(library.bco_error_message(error)) if error else 'out of memory'
            raise BuildError(f'{what} {os.fsdecode(encoded)!r} cannot be split into words: '
                             f'{reason}', kind='input' if kind == 1 else 'system')
        return [os.fsdecode(words[i]) for i in range(count.value)]
    finally:
        library.bco_free(words)
        library.bco_error_free(error)


def error_from(library, kind, error, failures):
    """The BuildError for a failed call: kind is what it returned, error its
    struct bco_error, failures the failure messages its progress gave."""
    if not error:
        return BuildError('out of memory', kind='system')
    message = text(library.bco_error_message(error)).rstrip('\n')
    kind_name = ERROR_KINDS.get(kind, 'system')
    if kind_name == 'step' and len(failures) > 1:
        # keep_going: the library's message is the first failure; add the rest.
        message = '\n'.join(failure.rstrip('\n') for failure in failures)
    schema_index = library.bco_error_schema_index(error)
    column = library.bco_error_column(error)
    signal_number = library.bco_error_signal(error)
    return BuildError(message, kind=kind_name,
                      schema_index=schema_index if schema_index >= 0 else None,
                      column=column if column > 0 else None,
                      signal=signal_number or None)
