"""_compile - compile() and generate_wrapper(), the package's two calls of
libbuildcustomop: their arguments checked and split (_arguments.py), the
call (_build_binding.py) with Python's SIGINT and SIGTERM handlers held back
(DeferredSignals, below), its progress shown or kept (Sink, below), its
failure a BuildError and its warnings BuildWarnings.

Builds in one process run one at a time; the library keeps nothing between
calls and puts signal dispositions back before it returns.
"""

import ctypes
import os
import signal
import sys
import threading
import warnings

from build_custom_op import _arguments, _build_binding
from build_custom_op._build_binding import (MESSAGE_STATUS, MESSAGE_COMMAND, MESSAGE_OUTPUT,
                                            MESSAGE_WARNING, MESSAGE_FAILURE)
from build_custom_op import BuildError, BuildWarning

# The library catches SIGINT and SIGTERM through process-wide state, and
# signal dispositions are process-wide: one build at a time per process.
_build_lock = threading.Lock()


def _call(function_name, request_arguments, sink):
    """Runs bco_build or bco_generate_wrapper.  Returns the list of
    artifacts or the wrapper text; raises BuildError."""
    library = _build_binding.load()
    strings = _arguments.Strings()
    request = _arguments.make_request(strings, **request_arguments)
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
        functions=None if fn_names is None else _arguments.list_of(fn_names, 'fn_names'),
        schemas=_arguments.list_of(schema, 'schema'),
        sources=_arguments.list_of(src_files, 'src_files'),
        build_dir=build_directory,
        includes=_arguments.split_includes(includes),
        cflags=_arguments.split_cflags(cflags),
        launcher=_arguments.split_launcher(launcher),
        target=target, multicore=multicore, jobs=jobs, dry_run=dry_run, verbose=verbose,
        keep_going=keep_going, sdk=sdk, core=core, xtensa_system=xtensa_system,
        ldflags=_arguments.split_flags(ldflags, 'ldflags', 'linker'),
        sanitize=_arguments.sanitizers(sanitize))
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


def generate_wrapper(schema, fn_names=None, *, target='xtensa'):
    """Returns the wrapper.cpp text for the ops (needs no toolchain)."""
    arguments = dict(functions=None if fn_names is None
                     else _arguments.list_of(fn_names, 'fn_names'),
                     schemas=_arguments.list_of(schema, 'schema'), target=target)
    sink = Sink()
    try:
        return _call('bco_generate_wrapper', arguments, sink)
    finally:
        for text in sink.warnings:
            warnings.warn(text, BuildWarning, stacklevel=2)


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

    def __call__(self, context, kind, raw):
        try:
            self.receive(kind, _build_binding.text(raw))
        except BaseException as exception:  # re-raised after the call
            if self.exception is None:
                self.exception = exception

    def receive(self, kind, text):
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
