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
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import warnings

from build_custom_op import _library as _library_files
from build_custom_op._profile import profile, Profile, CoreProfile, Hint

__version__ = '0.21.2.0'
versions = {
    'ulib_to_ucode_version': '1.21.1.0',
    'ulib_to_isa_version': '1.0.2520.0',
}

__all__ = ['compile', 'generate_wrapper', 'library_path', 'BuildError', 'BuildWarning',
           'main', 'versions', '__version__', 'profile', 'Profile', 'CoreProfile', 'Hint']

PROGRAM = 'build-custom-op'
LIBRARY_VARIABLE = 'BUILD_CUSTOM_OP_LIBRARY'
PROGRAM_VARIABLE = 'BUILD_CUSTOM_OP_PROGRAM'

# enum bco_target, enum bco_error_kind and enum bco_message_kind.
_TARGETS = {'xtensa': 0, 'host': 1}
_ERROR_KINDS = {1: 'input', 2: 'usage', 3: 'tool', 4: 'step', 5: 'interrupted', 6: 'system'}
_MESSAGE_STATUS, _MESSAGE_COMMAND, _MESSAGE_OUTPUT, _MESSAGE_WARNING, _MESSAGE_FAILURE = range(5)

# Include options whose argument may be the next word; a word after one of
# them is joined to it ("-isystem DIR" -> "-isystemDIR"), since any other
# word in includes is a directory that becomes -IDIR.
_INCLUDE_OPTIONS_WITH_ARGUMENT = ('-I', '-isystem', '-iquote', '-idirafter', '-include',
                                  '-imacros', '-isysroot')


class BuildError(Exception):
    """A build that did not succeed, with the library's full message.

    kind is one of 'input' (a bad schema, name, file or value), 'usage' (a
    malformed request), 'tool' (a tool or SDK file is missing), 'step' (a
    compile, link or pack step failed: the message holds the command and its
    output), 'interrupted' and 'system'.  schema_index (0-based) and column
    (1-based) point into the schema a schema error is about, else None.
    signal is the signal that interrupted the build, else None.
    """

    def __init__(self, message, kind='input', schema_index=None, column=None, signal=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.schema_index = schema_index
        self.column = column
        self.signal = signal


class BuildWarning(UserWarning):
    """A warning about the input of a build (compile() issues it)."""


# --- the C API --------------------------------------------------------------

_ProgressFunction = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
_StringList = ctypes.POINTER(ctypes.c_char_p)


class _Request(ctypes.Structure):
    """struct bco_request."""
    _fields_ = [
        ('name', ctypes.c_char_p),
        ('functions', _StringList),
        ('function_count', ctypes.c_size_t),
        ('schemas', _StringList),
        ('schema_count', ctypes.c_size_t),
        ('sources', _StringList),
        ('source_count', ctypes.c_size_t),
        ('build_dir', ctypes.c_char_p),
        ('includes', _StringList),
        ('include_count', ctypes.c_size_t),
        ('cflags', _StringList),
        ('cflag_count', ctypes.c_size_t),
        ('launcher', _StringList),
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
        ('progress', _ProgressFunction),
        ('progress_context', ctypes.c_void_p),
        ('ldflags', _StringList),
        ('ldflag_count', ctypes.c_size_t),
        ('sanitize', ctypes.c_char_p),
    ]


_library_handle = None
_library_lock = threading.Lock()
# The library catches SIGINT and SIGTERM through process-wide state, and
# signal dispositions are process-wide: one build at a time per process.
_build_lock = threading.Lock()


def _declare(library):
    void_p, c_int, size_t = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    out = ctypes.POINTER(ctypes.c_void_p)
    request = ctypes.POINTER(_Request)
    signatures = {
        'bco_build': (c_int, [request, out, out]),
        'bco_generate_wrapper': (c_int, [request, out, out]),
        'bco_result_count': (size_t, [void_p]),
        'bco_result_path': (ctypes.c_char_p, [void_p, size_t]),
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


def _build_library():
    """The loaded libbuildcustomop, loaded on first use."""
    global _library_handle
    with _library_lock:
        if _library_handle is None:
            try:
                _library_handle = _library_files.load('libbuildcustomop.so', LIBRARY_VARIABLE,
                                                      _declare)
            except _library_files.LibraryNotFound as error:
                raise BuildError(str(error), kind='tool') from None
        return _library_handle


def library_path():
    """The path of the libbuildcustomop in use (loading it if needed)."""
    return _build_library()._name


# --- turning arguments into a request -----------------------------------------

def _list_of(value, what):
    """A list argument: a list, a tuple or another ordered iterable; a lone
    string or path is a list of one.  A set is refused: it has no order, and
    the order of each list counts (the ops', the link's, the flags')."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [value]
    if value is None:
        return []
    if isinstance(value, (set, frozenset)):
        raise TypeError(f'{what} must be a list, not a {type(value).__name__}: a set has no '
                        f'order, and the order of {what} counts')
    try:
        return list(value)
    except TypeError:
        raise TypeError(f'{what} must be a list, not {type(value).__name__}') from None


def _encode(value, what):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = os.fsencode(value)
    elif not isinstance(value, bytes):
        raise TypeError(f'{what} must be a str, bytes or path, not {type(value).__name__}')
    if b'\0' in value:
        raise ValueError(f'{what} contains a NUL character: {value!r}')
    return value


def _flag(value, what):
    """A yes-or-no argument: a bool, the int 0 or 1, or None (no)."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return 1 if value else 0
    raise TypeError(f'{what} must be True or False, not {value!r}')


def _shell_words(entry, what):
    """Splits an entry into words as a POSIX shell would, expanding nothing
    (bco_split_words: the splitting build-custom-op does, in linear time).
    A path object is one word."""
    if isinstance(entry, os.PathLike):
        return [os.fspath(entry)]
    text = _encode(entry, what)
    library = _build_library()
    words = ctypes.POINTER(ctypes.c_char_p)()
    count = ctypes.c_size_t()
    error = ctypes.c_void_p()
    kind = library.bco_split_words(text, ctypes.byref(words), ctypes.byref(count),
                                   ctypes.byref(error))
    try:
        if kind != 0:
            reason = _text(library.bco_error_message(error)) if error else 'out of memory'
            raise BuildError(f'{what} {os.fsdecode(text)!r} cannot be split into words: {reason}',
                             kind='input' if kind == 1 else 'system')
        return [os.fsdecode(words[i]) for i in range(count.value)]
    finally:
        library.bco_free(words)
        library.bco_error_free(error)


def _split_flags(flags, what, tool):
    """The words of a list of flags (cflags, ldflags) for tool, which would
    take an empty word for a file."""
    words = []
    for i, entry in enumerate(_list_of(flags, what)):
        entry_words = _shell_words(entry, f'{what} entry {i + 1}')
        if '' in entry_words:
            raise BuildError(f'{what} entry {i + 1} {entry!r} holds an empty word: the {tool} '
                             f"would take it for a file named ''", kind='input')
        words.extend(entry_words)
    return words


def _split_cflags(cflags):
    return _split_flags(cflags, 'cflags', 'compiler')


def _sanitizers(sanitize):
    """The sanitizers as the library takes them: 'address,undefined'.  A
    string passes as it is (the library checks the names); a list or tuple
    of names is joined."""
    if sanitize is None or isinstance(sanitize, str):
        return sanitize or None
    names = _list_of(sanitize, 'sanitize')
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f'sanitize must hold names such as \'address\', not '
                            f'{type(name).__name__}')
    return ','.join(names) or None


def _split_includes(includes):
    words = []
    pending = None  # an option waiting for its argument, maybe in the next entry
    for i, entry in enumerate(_list_of(includes, 'includes')):
        for word in _shell_words(entry, f'includes entry {i + 1}'):
            if word == '':
                raise BuildError(f'includes entry {i + 1} {entry!r} holds an empty word: an '
                                 'include directory cannot be empty (-I alone would take the '
                                 "next compiler argument as its directory)", kind='input')
            if pending is not None:
                words.append(pending + word)
                pending = None
            elif word in _INCLUDE_OPTIONS_WITH_ARGUMENT:
                pending = word
            else:
                words.append(word)
    if pending is not None:
        raise BuildError(f'includes: {pending} at the end needs an argument', kind='input')
    return words


def _split_launcher(launcher):
    """The launcher's words: a list as given, or a string (default:
    $CUSTOM_OP_LAUNCHER) split as build-custom-op splits --launcher."""
    if launcher is None:
        launcher = os.environ.get('CUSTOM_OP_LAUNCHER', '')
        what = 'CUSTOM_OP_LAUNCHER'
    else:
        what = 'launcher'
    if isinstance(launcher, (str, bytes)):
        return _shell_words(launcher, what)
    return _list_of(launcher, 'launcher')


class _Strings:
    """Holds the encoded strings and arrays of a request while it is in use."""

    def __init__(self):
        self.keep = []

    def string(self, value, what):
        if value is None:
            return None
        encoded = _encode(value, what)
        self.keep.append(encoded)
        return encoded

    def array(self, values, what, entries_may_be_none=False):
        encoded = []
        for i, value in enumerate(values):
            if value is None and entries_may_be_none:
                encoded.append(None)
            else:
                encoded.append(_encode(value, f'{what} entry {i + 1}'))
        # Never NULL: an empty list given is still a list (a count of 0).
        array = (ctypes.c_char_p * max(1, len(encoded)))(*encoded)
        self.keep.append(array)
        return ctypes.cast(array, _StringList), len(encoded)


def _target_code(target):
    if not isinstance(target, str):
        raise TypeError(f"target must be 'xtensa' or 'host', not {type(target).__name__}")
    if target in _TARGETS:
        return _TARGETS[target]
    raise BuildError(f"unknown target '{target}': use xtensa or host", kind='usage')


def _jobs(jobs):
    if jobs is None:
        return 0
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f'jobs must be an int, not {type(jobs).__name__}')
    if jobs < 0:
        raise BuildError('jobs must be at least 1 (0 means one per CPU)', kind='usage')
    return min(jobs, 2**31 - 1)


def _make_request(strings, *, name=None, functions=None, schemas=(), sources=(),
                  build_dir=None, includes=(), cflags=(), launcher=(), target='xtensa',
                  multicore=False, jobs=None, dry_run=False, verbose=False,
                  keep_going=False, sdk=None, core=None, xtensa_system=None, ldflags=(),
                  sanitize=None):
    """A struct bco_request from word lists (nothing is split here)."""
    request = _Request()
    request.name = strings.string(name, 'name')
    if functions is not None:
        request.functions, request.function_count = strings.array(
            functions, 'fn_names', entries_may_be_none=True)
    request.schemas, request.schema_count = strings.array(schemas, 'schema')
    request.sources, request.source_count = strings.array(sources, 'src_files')
    request.build_dir = strings.string(build_dir, 'build_directory')
    request.includes, request.include_count = strings.array(includes, 'includes')
    request.cflags, request.cflag_count = strings.array(cflags, 'cflags')
    request.launcher, request.launcher_count = strings.array(launcher, 'launcher')
    request.target = _target_code(target)
    request.multicore = _flag(multicore, 'multicore')
    request.jobs = _jobs(jobs)
    request.dry_run = _flag(dry_run, 'dry_run')
    request.verbose = _flag(verbose, 'verbose')
    request.keep_going = _flag(keep_going, 'keep_going')
    request.sdk = strings.string(sdk, 'sdk')
    request.core = strings.string(core, 'core')
    request.xtensa_system = strings.string(xtensa_system, 'xtensa_system')
    request.ldflags, request.ldflag_count = strings.array(ldflags, 'ldflags')
    request.sanitize = strings.string(sanitize, 'sanitize')
    return request


# --- progress ---------------------------------------------------------------

def _text(raw):
    return raw.decode('utf-8', 'replace') if raw is not None else ''


def _with_newline(text):
    return text if text.endswith('\n') or not text else text + '\n'


class _Sink:
    """Receives the library's progress lines during one call.  An exception
    raised here (a closed stream, a KeyboardInterrupt between two steps) is
    kept and raised again when the library returns, instead of being lost
    inside the C callback."""

    def __init__(self):
        self.failures = []
        self.warnings = []
        self.exception = None

    def __call__(self, context, kind, raw):
        try:
            self.receive(kind, _text(raw))
        except BaseException as exception:  # re-raised after the call
            if self.exception is None:
                self.exception = exception

    def receive(self, kind, text):
        if kind == _MESSAGE_FAILURE:
            self.failures.append(text)
        elif kind == _MESSAGE_WARNING:
            self.warnings.append(text)


class _QuietSink(_Sink):
    """compile(): quiet unless verbose; failures go into BuildError."""

    def __init__(self, verbose, dry_run):
        super().__init__()
        self.verbose = verbose
        self.dry_run = dry_run

    def receive(self, kind, text):
        super().receive(kind, text)
        # A stream that is None (closed when Python started) drops the
        # text, as print() does.
        if kind == _MESSAGE_COMMAND and self.dry_run:
            if sys.stdout is not None:
                sys.stdout.write(text + '\n')
        elif kind == _MESSAGE_OUTPUT or (self.verbose and kind in (_MESSAGE_STATUS,
                                                                    _MESSAGE_COMMAND)):
            if sys.stderr is not None:
                sys.stderr.write(_with_newline(text))
                sys.stderr.flush()


# --- one call into the library ----------------------------------------------

def _error_from(library, kind, error, sink):
    """The BuildError for a failed call."""
    if not error:
        return BuildError('out of memory', kind='system')
    message = _text(library.bco_error_message(error)).rstrip('\n')
    kind_name = _ERROR_KINDS.get(kind, 'system')
    if kind_name == 'step' and len(sink.failures) > 1:
        # keep_going: the library's message is the first failure; add the rest.
        message = '\n'.join(failure.rstrip('\n') for failure in sink.failures)
    schema_index = library.bco_error_schema_index(error)
    column = library.bco_error_column(error)
    signal_number = library.bco_error_signal(error)
    return BuildError(message, kind=kind_name,
                      schema_index=schema_index if schema_index >= 0 else None,
                      column=column if column > 0 else None,
                      signal=signal_number or None)


class _DeferredSignals:
    """Holds back Python's handlers of SIGINT and SIGTERM during a call.

    A Python signal handler runs at the next Python code, which during a
    call may be the progress callback; an exception raised there (a
    KeyboardInterrupt) would be printed and dropped by ctypes.  So while the
    library runs (outside its steps, where its own handlers take over), a
    Python handler is replaced by one that notes the signal, and after the
    call the noted signals are raised again for the original handlers."""

    def __init__(self):
        self.saved = {}
        self.noted = []

    def __enter__(self):
        # Python handlers can only be changed, and only run, in the main thread.
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                handler = signal.getsignal(number)
                if callable(handler):
                    self.saved[number] = handler
                    signal.signal(number, self.note)
        return self

    def note(self, number, frame):
        if number not in self.noted:
            self.noted.append(number)

    def __exit__(self, *exception):
        for number, handler in self.saved.items():
            signal.signal(number, handler)

    def deliver(self):
        """Raises the noted signals again; their handlers run now."""
        for number in self.noted:
            signal.raise_signal(number)


def _call(function_name, request_arguments, sink):
    """Runs bco_build or bco_generate_wrapper.  Returns the list of
    artifacts or the wrapper text; raises BuildError."""
    library = _build_library()
    strings = _Strings()
    request = _make_request(strings, **request_arguments)
    progress = _ProgressFunction(sink)  # referenced until the call returns
    request.progress = progress
    output = ctypes.c_void_p()
    error = ctypes.c_void_p()
    failure = None
    value = None
    with _build_lock, _DeferredSignals() as deferred:
        try:
            kind = getattr(library, function_name)(ctypes.byref(request), ctypes.byref(output),
                                                   ctypes.byref(error))
            if kind != 0:
                failure = _error_from(library, kind, error, sink)
            elif function_name == 'bco_build':
                value = [os.fsdecode(library.bco_result_path(output, i))
                         for i in range(library.bco_result_count(output))]
            else:
                value = ctypes.string_at(output.value).decode('utf-8', 'replace')
        finally:
            if function_name == 'bco_build':
                library.bco_result_free(output)
            else:
                library.bco_free(output)
            library.bco_error_free(error)
    del progress
    deferred.deliver()
    if sink.exception is not None:
        raise sink.exception
    if failure is not None:
        raise failure
    return value


def _deliver_interrupt(error):
    """After the library stopped a build for a signal (its handler had taken
    the signal's place while the steps ran): act as the caller's own
    disposition of that signal would have."""
    number = error.signal or signal.SIGINT
    handler = signal.getsignal(number)
    if threading.current_thread() is not threading.main_thread():
        # Python runs signal handlers in the main thread only: the signal,
        # raised again, reaches the main thread as it would have without the
        # build (a KeyboardInterrupt there for Ctrl-C), and this thread's
        # call ends with the error.
        if handler == signal.SIG_DFL or callable(handler):
            signal.raise_signal(number)
        raise error
    if number == signal.SIGINT and handler is signal.default_int_handler:
        raise KeyboardInterrupt
    if handler == signal.SIG_DFL or callable(handler):
        # SIG_DFL ends the process as the signal would have; a Python
        # handler runs now, and what it raises propagates.
        signal.raise_signal(number)
    raise error


# --- the public face ----------------------------------------------------------

def compile(name, fn_names, src_files, schema, build_directory,
            includes=[], cflags=[], multicore=False, verbose=False,
            *, jobs=None, target='xtensa', launcher=None, dry_run=False,
            keep_going=False, sdk=None, core=None, xtensa_system=None, ldflags=(),
            sanitize=None):
    """Builds the custom-op library NAME and returns the list of its paths.

    name: the library name (an extension is dropped).  fn_names: the kernel
    function of each op, in the order of schema (None takes the op name in
    the schema).  src_files: the kernel sources.  schema: one PyTorch schema
    per op, e.g. 'my_ops::relu(Tensor x) -> Tensor'.  build_directory: where
    everything is written.  includes and cflags: each entry is split into
    words as a POSIX shell would (nothing is expanded or executed), as
    build-custom-op splits --launcher; an include word that is not an
    option becomes -IDIR; an empty word is refused.  multicore: link
    eight libraries, one per GPSIMD core.  verbose: print the status and
    each command on stderr, as build-custom-op -v does.

    Returns [build_directory/NAME.packed.so], or NAME_cpu0 .. NAME_cpu7 with
    multicore; the linked NAME.so when '-g' is one of the cflags words, or
    for the host target.

    Keyword-only: jobs (parallel steps; None: one per CPU), target
    ('xtensa' or 'host'), launcher (a command put before each compile, as
    a string or a list of words; None: $CUSTOM_OP_LAUNCHER), dry_run (print
    the commands on stdout and run none), keep_going, sdk, core,
    xtensa_system (as the command's options), ldflags (put at the end of
    every link, split as cflags are), sanitize (host target: 'address',
    'undefined', 'address,undefined' or a list of those names; see
    build-custom-op(1), --sanitize).

    Raises BuildError on any failure.  A SIGINT or SIGTERM while the steps
    run stops them and deletes their partial outputs; then the signal means
    what the program made it mean: KeyboardInterrupt for SIGINT with
    Python's default handler, the end of the process for SIGTERM with its
    default disposition, a call of a Python handler, or else BuildError of
    kind 'interrupted'.  Called from another thread than the main one, the
    call raises BuildError of kind 'interrupted' and the signal is raised
    again for the main thread, where Python runs its handlers.

    The lists may be lists or tuples, not sets (their order counts); a
    wrong type raises TypeError naming the argument.
    """
    arguments = dict(
        name=name,
        functions=None if fn_names is None else _list_of(fn_names, 'fn_names'),
        schemas=_list_of(schema, 'schema'),
        sources=_list_of(src_files, 'src_files'),
        build_dir=build_directory,
        includes=_split_includes(includes),
        cflags=_split_cflags(cflags),
        launcher=_split_launcher(launcher),
        target=target, multicore=multicore, jobs=jobs, dry_run=dry_run, verbose=verbose,
        keep_going=keep_going, sdk=sdk, core=core, xtensa_system=xtensa_system,
        ldflags=_split_flags(ldflags, 'ldflags', 'linker'), sanitize=_sanitizers(sanitize))
    sink = _QuietSink(bool(verbose), bool(dry_run))
    try:
        return _call('bco_build', arguments, sink)
    except BuildError as error:
        if error.kind != 'interrupted':
            raise
        interrupted = error
    finally:
        for text in sink.warnings:
            warnings.warn(text, BuildWarning, stacklevel=2)
    # Outside the except clause: what this raises is not "during handling".
    _deliver_interrupt(interrupted)


def generate_wrapper(schema, fn_names=None, *, target='xtensa'):
    """Returns the wrapper.cpp text for the ops (needs no toolchain)."""
    arguments = dict(functions=None if fn_names is None else _list_of(fn_names, 'fn_names'),
                     schemas=_list_of(schema, 'schema'), target=target)
    sink = _Sink()
    try:
        return _call('bco_generate_wrapper', arguments, sink)
    finally:
        for text in sink.warnings:
            warnings.warn(text, BuildWarning, stacklevel=2)


# --- the command ------------------------------------------------------------

def program_path():
    """The path of the build-custom-op program that python3 -m
    build_custom_op and main() run: the source tree's (after make), the
    install's (make install records it), or $BUILD_CUSTOM_OP_PROGRAM.
    Raises BuildError (kind 'tool') when there is none."""
    try:
        return _library_files.find_program(PROGRAM, PROGRAM_VARIABLE)
    except _library_files.ProgramNotFound as error:
        raise BuildError(str(error), kind='tool') from None


def main(argv=None):
    """Runs the build-custom-op program with argv (default: sys.argv[1:]),
    on this process's standard descriptors, and returns its exit status; a
    program ended by signal N gives 128 + N, as a shell reports it.  A
    KeyboardInterrupt while it runs is passed on to it as SIGINT: main()
    waits for it to stop its tools and delete their partial outputs, then
    raises the KeyboardInterrupt.  A missing program raises BuildError."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    process = subprocess.Popen([program_path()] + [os.fspath(word) for word in arguments])
    interrupted = None
    while True:
        try:
            status = process.wait()
            break
        except KeyboardInterrupt as interrupt:
            interrupted = interrupt
            process.send_signal(signal.SIGINT)
    if interrupted is not None:
        raise interrupted
    return 128 - status if status < 0 else status
