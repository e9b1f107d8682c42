"""_compile - compile() and generate_wrapper(), the package's two calls of
libbuildcustomop: their arguments checked and split (_arguments.py), the
call (_build_binding.py) with Python's SIGINT and SIGTERM handlers held back
(_signals.py), its progress shown or kept (_progress.py), its failure a
BuildError and its warnings BuildWarnings.

Builds in one process run one at a time; the library keeps nothing between
calls and puts signal dispositions back before it returns.
"""

import ctypes
import os
import threading
import warnings

from build_custom_op import _arguments, _build_binding, _progress, _signals
from build_custom_op._errors import BuildError, BuildWarning

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
    with _build_lock, _signals.DeferredSignals() as deferred:
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
    sink = _progress.QuietSink(bool(verbose), bool(dry_run))
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
    _signals.deliver_interrupt(interrupted)


def generate_wrapper(schema, fn_names=None, *, target='xtensa'):
    """Returns the wrapper.cpp text for the ops (needs no toolchain)."""
    arguments = dict(functions=None if fn_names is None
                     else _arguments.list_of(fn_names, 'fn_names'),
                     schemas=_arguments.list_of(schema, 'schema'), target=target)
    sink = _progress.Sink()
    try:
        return _call('bco_generate_wrapper', arguments, sink)
    finally:
        for text in sink.warnings:
            warnings.warn(text, BuildWarning, stacklevel=2)
