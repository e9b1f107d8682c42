"""_compile - compile() and generate_wrapper(), the package's two calls of
libbuildcustomop: their arguments checked and split (make_request,
below), the call (_build_binding.py) with Python's SIGINT and SIGTERM
handlers held back (DeferredSignals, below), its progress shown or kept
(Sink, below), its failure a BuildError and its warnings BuildWarnings.

Builds in one process run one at a time; the library keeps nothing between
calls and puts signal dispositions back before it returns.
"""

import ctypes
import os
import signal
import sys
import threading
import warnings

from build_custom_op import _build_binding
from build_custom_op._build_binding import (MESSAGE_STATUS, MESSAGE_COMMAND, MESSAGE_OUTPUT,
                                            MESSAGE_WARNING, MESSAGE_FAILURE)
from build_custom_op import BuildError, BuildWarning

# The library catches SIGINT and SIGTERM through process-wide state, and
# signal dispositions are process-wide: one build at a time per process.
_build_lock = threading.Lock()
# This thread's list for the settled paths of its compile() call, while
# compile_noting_settled() runs it.
_noting = threading.local()


def _call(function_name, request_arguments, sink):
    """Runs bco_build or bco_generate_wrapper.  Returns the list of
    artifacts or the wrapper text; raises BuildError."""
    library = _build_binding.load()
    strings = Strings()
    request = make_request(strings, **request_arguments)
    progress = _build_binding.ProgressFunction(sink)  # referenced until the call returns
    request.progress = progress
    output = ctypes.c_void_p()
    error = ctypes.c_void_p()
    failure = None
    value = None
    with _build_lock, DeferredSignals() as deferred:
        try:
            kind = getattr(library, function_name)(ctypes.byref(request), ctypes.byref(output),
                                                   ctypes.byref(error))
            if kind != 0:
                failure = _build_binding.error_from(library, kind, error, sink.failures)
            elif function_name == 'bco_build':
                value = [os.fsdecode(library.bco_result_path(output, i))
                         for i in range(library.bco_result_count(output))]
                settled = getattr(_noting, 'settled', None)
                if settled is not None and not sink.said_more:
                    settled.extend(os.fsdecode(library.bco_result_settled_path(output, i))
                                   for i in range(library.bco_result_settled_count(output)))
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
        functions=None if fn_names is None else list_of(fn_names, 'fn_names'),
        schemas=list_of(schema, 'schema'),
        sources=list_of(src_files, 'src_files'),
        build_dir=build_directory,
        includes=split_includes(includes),
        cflags=split_cflags(cflags),
        launcher=split_launcher(launcher),
        target=target, multicore=multicore, jobs=jobs, dry_run=dry_run, verbose=verbose,
        keep_going=keep_going, sdk=sdk, core=core, xtensa_system=xtensa_system,
        ldflags=split_flags(ldflags, 'ldflags', 'linker'),
        sanitize=sanitizers(sanitize))
    sink = QuietSink(bool(verbose), bool(dry_run))
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
    deliver_interrupt(interrupted)


def compile_noting_settled(settled, **arguments):
    """compile(**arguments), which also puts in the list settled what the
    result's being up to date rests on (bco_result_settled_path): for a
    host build that ran nothing and said nothing but its status, the
    files and directories whose stat tells that the same call would again
    do nothing; else nothing."""
    _noting.settled = settled
    try:
        return compile(**arguments)
    finally:
        _noting.settled = None


def generate_wrapper(schema, fn_names=None, *, target='xtensa'):
    """Returns the wrapper.cpp text for the ops (needs no toolchain)."""
    arguments = dict(functions=None if fn_names is None
                     else list_of(fn_names, 'fn_names'),
                     schemas=list_of(schema, 'schema'), target=target)
    sink = Sink()
    try:
        return _call('bco_generate_wrapper', arguments, sink)
    finally:
        for text in sink.warnings:
            warnings.warn(text, BuildWarning, stacklevel=2)


# --- the arguments, checked and made a request ----------------------------------------
#
# compile()'s and generate_wrapper()'s arguments, checked and turned into a
# struct bco_request.
#
# Lists may be lists, tuples or other ordered iterables, never sets; includes,
# cflags, ldflags and a launcher string are split into words as
# build-custom-op splits --launcher (bco_split_words).  A wrong type raises
# TypeError naming the argument; a wrong value BuildError.

# Include options whose argument may be the next word; a word after one of
# them is joined to it ("-isystem DIR" -> "-isystemDIR"), since any other
# word in includes is a directory that becomes -IDIR.
_INCLUDE_OPTIONS_WITH_ARGUMENT = ('-I', '-isystem', '-iquote', '-idirafter', '-include',
                                  '-imacros', '-isysroot')


def list_of(value, what):
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
    """Splits an entry into words as a POSIX shell would, expanding nothing.
    A path object is one word."""
    if isinstance(entry, os.PathLike):
        return [os.fspath(entry)]
    return _build_binding.split_words(_encode(entry, what), what)


def split_flags(flags, what, tool):
    """The words of a list of flags (cflags, ldflags) for tool, which would
    take an empty word for a file."""
    words = []
    for i, entry in enumerate(list_of(flags, what)):
        entry_words = _shell_words(entry, f'{what} entry {i + 1}')
        if '' in entry_words:
            raise BuildError(f'{what} entry {i + 1} {entry!r} holds an empty word: the {tool} '
                             f"would take it for a file named ''", kind='input')
        words.extend(entry_words)
    return words


def split_cflags(cflags):
    return split_flags(cflags, 'cflags', 'compiler')


def sanitizers(sanitize):
    """The sanitizers as the library takes them: 'address,undefined'.  A
    string passes as it is (the library checks the names); a list or tuple
    of names is joined."""
    if sanitize is None or isinstance(sanitize, str):
        return sanitize or None
    names = list_of(sanitize, 'sanitize')
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f'sanitize must hold names such as \'address\', not '
                            f'{type(name).__name__}')
    return ','.join(names) or None


def split_includes(includes):
    words = []
    pending = None  # an option waiting for its argument, maybe in the next entry
    for i, entry in enumerate(list_of(includes, 'includes')):
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


def split_launcher(launcher):
    """The launcher's words: a list as given, or a string (default:
    $CUSTOM_OP_LAUNCHER) split as build-custom-op splits --launcher."""
    if launcher is None:
        launcher = os.environ.get('CUSTOM_OP_LAUNCHER', '')
        what = 'CUSTOM_OP_LAUNCHER'
    else:
        what = 'launcher'
    if isinstance(launcher, (str, bytes)):
        return _shell_words(launcher, what)
    return list_of(launcher, 'launcher')


class Strings:
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
        return ctypes.cast(array, _build_binding.StringList), len(encoded)


def _target_code(target):
    if not isinstance(target, str):
        raise TypeError(f"target must be 'xtensa' or 'host', not {type(target).__name__}")
    if target in _build_binding.TARGETS:
        return _build_binding.TARGETS[target]
    raise BuildError(f"unknown target '{target}': use xtensa or host", kind='usage')


def _jobs(jobs):
    if jobs is None:
        return 0
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f'jobs must be an int, not {type(jobs).__name__}')
    if jobs < 0:
        raise BuildError('jobs must be at least 1 (0 means one per CPU)', kind='usage')
    return min(jobs, 2**31 - 1)


def make_request(strings, *, name=None, functions=None, schemas=(), sources=(),
                 build_dir=None, includes=(), cflags=(), launcher=(), target='xtensa',
                 multicore=False, jobs=None, dry_run=False, verbose=False,
                 keep_going=False, sdk=None, core=None, xtensa_system=None, ldflags=(),
                 sanitize=None):
    """A struct bco_request from word lists (nothing is split here)."""
    request = _build_binding.Request()
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


# --- progress lines -------------------------------------------------------------------
#
# What compile() and generate_wrapper() do with the progress lines the
# library gives during a call (struct bco_request's progress callback):
# status and commands on stderr when verbose, the commands on stdout for a
# dry run, a step's output on stderr; warnings and failures kept for the
# caller.

def _with_newline(text):
    return text if text.endswith('\n') or not text else text + '\n'


class Sink:
    """Receives the library's progress lines during one call.  An exception
    raised here (a closed stream, a KeyboardInterrupt between two steps) is
    kept and raised again when the library returns, instead of being lost
    inside the C callback."""

    def __init__(self):
        self.failures = []
        self.warnings = []
        self.exception = None
        self.said_more = False   # anything but a status line

    def __call__(self, context, kind, raw):
        try:
            self.receive(kind, _build_binding.text(raw))
        except BaseException as exception:  # re-raised after the call
            if self.exception is None:
                self.exception = exception

    def receive(self, kind, text):
        if kind != MESSAGE_STATUS:
            self.said_more = True
        if kind == MESSAGE_FAILURE:
            self.failures.append(text)
        elif kind == MESSAGE_WARNING:
            self.warnings.append(text)


class QuietSink(Sink):
    """compile(): quiet unless verbose; failures go into BuildError."""

    def __init__(self, verbose, dry_run):
        super().__init__()
        self.verbose = verbose
        self.dry_run = dry_run

    def receive(self, kind, text):
        super().receive(kind, text)
        # A stream that is None (closed when Python started) drops the
        # text, as print() does.
        if kind == MESSAGE_COMMAND and self.dry_run:
            if sys.stdout is not None:
                sys.stdout.write(text + '\n')
        elif kind == MESSAGE_OUTPUT or (self.verbose and kind in (MESSAGE_STATUS,
                                                                   MESSAGE_COMMAND)):
            if sys.stderr is not None:
                sys.stderr.write(_with_newline(text))
                sys.stderr.flush()


# --- SIGINT and SIGTERM around a call -------------------------------------------------
#
# During the call Python's handlers are held back and the signals they would
# have taken are raised again after it (DeferredSignals); after a build the
# library stopped for a signal, the caller's own disposition of that signal
# acts (deliver_interrupt).  Python's handlers only change and only run in
# the main thread: a call from another thread holds nothing back, and the
# signal is raised again for the main thread.

class DeferredSignals:
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


def deliver_interrupt(error):
    """After the library stopped a build for a signal (its handler had taken
    the signal's place while the steps ran): act as the caller's own
    disposition of that signal would have; else raise error (a BuildError
    of kind 'interrupted')."""
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
