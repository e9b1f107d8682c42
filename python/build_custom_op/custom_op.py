"""build_custom_op.custom_op - custom ops from PyTorch: shape library,
schemas, compute build, lib<name>.so bundle, registration.

A drop-in for torch-neuronx's ``custom_op.load()`` and ``load_library()``,
with two more keyword arguments: ``target``, 'xtensa' (the device, the
default) or 'host' (this machine: the kernels run on the emulated GPSIMD
cores), by default the environment variable CUSTOM_OP_TARGET; and
``timeout``, the seconds a call of a host op may take, by default
CUSTOM_OP_TIMEOUT (unset: no limit), and the longest a wait for a cache
entry that another process is building may last.

    from build_custom_op import custom_op
    custom_op.load('relu', ['relu.cpp'], ['shape.cpp'], build_directory='.',
                   target='host')            # writes ./librelu.so
    custom_op.load_library('librelu.so', target='host')
    y = torch.ops.my_ops.relu_forward(x)

load() runs six steps; an error says which one and which file:
  1. check the op and compute function names that the shape sources give
     m.def as string literals, as step 4 will (_op_names.py; sources the
     cache records as passed for the target are not checked again), then build
     lib<name>shapefcn.so from the shape sources with
     torch.utils.cpp_extension (torch's own flags, plus the directory of
     torchneuron/register.h), or find it in the cache, and load it;
  2. read each (namespace, op, compute function) through register.h's C
     functions;
  3. format each op's schema from PyTorch's parsed schema, as the original;
  4. build the compute library: build_custom_op.compile() with
     name=f'lib{name}customop.so' and the original's arguments, in a
     directory that is kept, so that the build is incremental and
     wrapper.cpp and compile_commands.json stay: build_directory/
     lib{name}customop.build, or without a build_directory one in the
     cache (on the host, a build that had nothing to do is recorded, and
     while all it rested on is unchanged, not called again: see
     _settled_build);
  5. make the lib<name>.so bundle (an ar archive: the shape library, the
     compute libraries, on the host their .ops record, and metadata.json)
     and, with a build_directory, write it there (a temporary name, then a
     rename), unless the file there is already, byte for byte, the bundle
     of these members that the cache records;
  6. register torch.ops.<ns>.<op>.

The shape library is kept in a cache (see _torch_build.py): a second
load() of unchanged sources does not compile it again, whatever the
library's name.  On the host target each op is PyTorch's own operator,
whose CPU kernel runs the compute function (see _host_ops.py).  Imports
torch.
"""

import contextlib
import hashlib
import importlib.util
import json
import numbers
import os
import re
import sys
import time
import warnings

import torch

import build_custom_op
from build_custom_op import BuildError
from build_custom_op import _bundle
from build_custom_op import _fingerprint
from build_custom_op import _library
from build_custom_op import _shape_library
from build_custom_op import _torch_build

__all__ = ['load', 'load_library', 'CustomOpError', 'CustomOpWarning', 'TARGET_VARIABLE',
           'TIMEOUT_VARIABLE']

TARGET_VARIABLE = 'CUSTOM_OP_TARGET'
TIMEOUT_VARIABLE = 'CUSTOM_OP_TIMEOUT'
_TARGETS = ('xtensa', 'host')


class CustomOpError(BuildError):
    """A step of load() or load_library() that failed.  step names it (for
    example 'building the shape library'); path is the file it is about, or
    None.  A failed compute build keeps compile()'s kind, schema_index and
    column."""

    def __init__(self, message, step, path=None, kind='input', schema_index=None, column=None):
        super().__init__(message, kind=kind, schema_index=schema_index, column=column)
        self.step = step
        self.path = path


class CustomOpWarning(UserWarning):
    """load() built and wrote a bundle but could not register its ops, or
    passed a flag of extra_cflags to one of its two builds only."""


# --- arguments ----------------------------------------------------------------

def _target(target):
    chosen = target
    if chosen is None:
        chosen = os.environ.get(TARGET_VARIABLE) or 'xtensa'
        origin = f'${TARGET_VARIABLE}'
    else:
        origin = 'target'
    if chosen not in _TARGETS:
        raise CustomOpError(f"{origin} is {chosen!r}: use 'xtensa' (the device) or 'host' "
                            '(the emulated cores of this machine)', 'arguments', kind='usage')
    return chosen


def _timeout(timeout):
    """The seconds a call of a host op may take, or None (no limit)."""
    chosen = timeout
    origin = 'timeout'
    if chosen is None:
        text = os.environ.get(TIMEOUT_VARIABLE)
        if not text:
            return None
        origin = f'${TIMEOUT_VARIABLE}'
        try:
            chosen = float(text)
        except ValueError:
            chosen = text
    if isinstance(chosen, bool) or not isinstance(chosen, numbers.Real) or \
            not 0 < chosen < float('inf'):
        raise CustomOpError(f'{origin} is {chosen!r}: give the seconds a call of an op may '
                            'take, a number above 0 (or leave it out: no limit)', 'arguments',
                            kind='usage')
    return float(chosen)


def _files(value, what):
    """A list of file paths; a lone string or path is a list of one."""
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, bytes):
        return [os.fsdecode(value)]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f'{what} must be a file name or a list of them, not '
                        f'{type(value).__name__}') from None
    paths = []
    for item in items:
        if isinstance(item, bytes):
            item = os.fsdecode(item)
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f'{what} must hold file names, not {type(item).__name__}')
        paths.append(os.fspath(item))
    return paths


def _strings(value, what):
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    return [os.fspath(item) for item in value]


# A library name: one of _NAME_START, then any of _NAME_START and _NAME_MORE.
_NAME_START = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_')
_NAME_MORE = frozenset('.+-')


def _check_name(name, function):
    if not isinstance(name, str) or not name or name[0] not in _NAME_START or \
            not (_NAME_START | _NAME_MORE).issuperset(name):
        raise CustomOpError(f'{function}: the library name {name!r} must be letters, digits, '
                            "'_', '.', '+' and '-', starting with a letter, digit or '_' "
                            '(it names the files lib<name>.so, lib<name>shapefcn.so and '
                            'lib<name>customop.so)', 'arguments', kind='usage')


def _check_readable(paths, what, function):
    if not paths:
        raise CustomOpError(f'{function}: no {what}: give at least one C++ file',
                            'arguments', kind='usage')
    for path in paths:
        if not os.path.isfile(path):
            reason = 'is not a regular file' if os.path.exists(path) else 'does not exist'
            raise CustomOpError(f'{function}: the {what[:-1]} {path} {reason}', 'arguments',
                                path=path)


# --- load() ---------------------------------------------------------------------

class _Steps:
    """Turns each step's failure into a CustomOpError that names it."""

    def __init__(self, function, name, count):
        self.function = function if name is None else f'{function}({name!r})'
        self.count = count

    def fail(self, number, description, detail, path=None, cause=None):
        where = f' [{path}]' if path else ''
        message = f'{self.function}: step {number} of {self.count}, {description}{where}: {detail}'
        extra = {}
        if isinstance(cause, BuildError):
            extra = dict(kind=cause.kind, schema_index=cause.schema_index, column=cause.column)
        return CustomOpError(message, description, path=path, **extra)


def _loaded_shape_ops(path, steps, number, schema_number):
    """Steps 2 and 3: the ops of the loaded shape library, with their schemas."""
    try:
        ops = _shape_library.read_ops(path)
    except _shape_library.ShapeLibraryError as error:
        raise steps.fail(number, 'reading the ops of the shape library', str(error),
                         path) from None
    for op in ops:
        try:
            op.schema = _shape_library.schema_string(op)
        except RuntimeError as error:
            raise steps.fail(schema_number, 'formatting the schemas', f'{op.qualified}: {error}',
                             op.source) from None
    return ops


def _compute_build(name, ops, compute_srcs, extra_cflags, multicore, verbose, target,
                   directory, steps, sanitize=None):
    """Step 4: compile() as the original calls it, plus the target (and the
    sanitizers, which only this build gets); on the host, the libraries of
    a settled build when nothing it rested on changed (_settled_build)."""
    arguments = dict(name=f'lib{name}customop.so', fn_names=[op.fn for op in ops],
                     src_files=compute_srcs, schema=[op.schema for op in ops],
                     build_directory=directory, cflags=extra_cflags, verbose=verbose,
                     target=target)
    if multicore:
        arguments['multicore'] = multicore
    if sanitize:
        arguments['sanitize'] = sanitize
    key = _settled_build_identity(arguments) if target == 'host' and not verbose and \
        not sanitize else None
    if key is not None:
        libraries = _settled_build(key)
        if libraries is not None:
            return libraries
    try:
        if key is None:
            libraries = build_custom_op.compile(**arguments)
        else:
            from build_custom_op import _compile
            settled = []
            started_ns = time.time_ns()
            libraries = _compile.compile_noting_settled(settled, **arguments)
            _keep_settled_build(key, libraries, settled, started_ns)
    except BuildError as error:
        detail = error.message
        if error.schema_index is not None and 0 <= error.schema_index < len(ops):
            op = ops[error.schema_index]
            where = f' (registered at {op.source})' if op.source else ''
            detail = f'op {op.qualified}{where}: {detail}'
            if error.column is not None:
                detail += ('\nPyTorch infers the schema from the shape function\'s C++ '
                           'signature: its arguments can be torch::Tensor, torch::Scalar, '
                           'double and int64_t, and it returns one torch::Tensor')
        elif error.kind == 'step':
            problems = _missing_functions(directory, compute_srcs, ops, target, error.message)
            if problems:
                from build_custom_op import _compute_functions
                detail = _compute_functions.message(problems, compute_srcs)
        raise steps.fail(4, 'building the compute library', detail,
                         ', '.join(compute_srcs), cause=error) from None
    if not isinstance(libraries, list):
        libraries = [libraries]
    return libraries


# Bumped when the record of a settled build, or what its key holds, changes.
_SETTLED_FORMAT = 1


def _settled_build_identity(arguments):
    """The key of the record of a settled compute build: compile()'s
    arguments, the environment, the working directory, the program and
    each file libbuildcustomop could be loaded from, by its stat (what the
    library's resolution and check rest on besides the files that the
    record lists: bco_result_settled_path in buildcustomop.h)."""
    candidates = []
    for path in _library.candidates(_library.BUILDER_FILE, _library.BUILDER_VARIABLE):
        try:
            candidates.append([path, _fingerprint.of(os.stat(path))])
        except OSError:
            candidates.append([path, None])
    try:
        program = os.readlink('/proc/self/exe')
    except OSError:
        program = sys.executable
    description = [_SETTLED_FORMAT, arguments, sorted(os.environ.items()), os.getcwd(), program,
                   candidates]
    return hashlib.sha256(json.dumps(description, default=os.fspath).encode(
        'utf-8', 'surrogateescape')).hexdigest()[:32]


def _settled_build(key):
    """The libraries of the settled build the cache records under key,
    when every file and directory it rested on has the stat it had then;
    else None."""
    record = _torch_build.record(_torch_build.SETTLED_BUILDS, key)
    try:
        libraries, settled = record['libraries'], record['settled']
        watched = set()
        for path, fingerprint in settled:
            if not isinstance(path, str) or _fingerprint.of(os.stat(path)) != fingerprint:
                return None
            watched.add(path)
        if not settled or not all(isinstance(library, str) and library in watched
                                  for library in libraries):
            return None
    except (OSError, TypeError, KeyError, ValueError):
        return None
    return list(libraries)


def _keep_settled_build(key, libraries, settled, started_ns):
    """Records a build that did nothing and listed what that rested on
    (settled), when each of those files and directories had last changed
    more than _fingerprint.SETTLED_NS before the build started (a change
    within the same tick of the file system's clock keeps the stat)."""
    entries = []
    for path in settled:
        try:
            info = os.stat(path)
        except OSError:
            return
        if info.st_ctime_ns >= started_ns - _fingerprint.SETTLED_NS:
            return
        entries.append([path, _fingerprint.of(info)])
    if entries:
        _torch_build.keep_record(_torch_build.SETTLED_BUILDS, key,
                                 {'libraries': list(libraries), 'settled': entries})


def _missing_functions(directory, compute_srcs, ops, target, output):
    """After a failed compute build: the compute functions the link could
    not find, if that is why it failed."""
    if 'FAILED:' not in output or not re.search(r'^FAILED: \S+\.so$', output, re.M) or \
            re.search(r'^FAILED: \S+\.packed\.so$', output, re.M):
        return []
    try:
        wrapper = build_custom_op.generate_wrapper([op.schema for op in ops],
                                                   [op.fn for op in ops], target=target)
    except BuildError:
        return []
    from build_custom_op import _compute_functions
    return _compute_functions.diagnose(directory, compute_srcs, ops, wrapper, output)


@contextlib.contextmanager
def _compute_directory(name, build_directory, compute_srcs, target, steps):
    """Where step 4 builds, made if missing: build_directory/
    lib<name>customop.build, or an entry of the cache named by the library
    and its sources, checked and locked as the cache's entries are
    (_torch_build.compute_entry) while the block runs."""
    if build_directory is not None:
        directory = os.path.join(os.fspath(build_directory), f'lib{name}customop.build')
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as error:
            raise steps.fail(4, 'building the compute library', 'cannot create the directory '
                             f'of the build: {error.strerror}', directory) from None
        yield directory
        return
    identity = json.dumps([name, target, [os.path.abspath(src) for src in compute_srcs]])
    key = hashlib.sha256(identity.encode('utf-8')).hexdigest()[:24]
    with contextlib.ExitStack() as held:
        try:
            directory = held.enter_context(_torch_build.compute_entry(key))
        except _torch_build.TorchBuildError as error:
            raise steps.fail(4, 'building the compute library', str(error)) from None
        yield directory


def _bundle_members(name, shape_path, libraries, directory, ops, target):
    """Step 5: the bundle's members in the original's order (the host's
    .ops record before metadata.json), as _bundle.Bundle takes them:
    [(name, bytes or None)] and {name: (path, size, sha256)} of those known
    by their files; and the metadata.  Each file's digests are known by its
    fingerprint (_fingerprint.py) when it is unchanged since it was last
    read; else it is read and hashed."""
    store = _torch_build.digests()
    shapelib = f'lib{name}shapefcn.so'
    computelibs = [os.path.basename(library) for library in libraries]
    paths = [(shapelib, shape_path)] + [(os.path.basename(path), path) for path in libraries]
    if target == 'host':
        record = _bundle.host_record_name(computelibs)
        paths.append((record, os.path.join(directory, record)))
    files = {}
    computelib_md5 = None
    for index, (member, path) in enumerate(paths):
        size, sha256, md5 = store.digests(path, md5=index == 1)
        files[member] = (path, size, sha256)
        computelib_md5 = computelib_md5 or md5
    meta = _bundle.metadata(build_custom_op.versions, shapelib,
                            [(op.namespace, op.op, op.fn, op.schema) for op in ops],
                            computelibs, computelib_md5, target,
                            {member: sha256 for member, (_, _, sha256) in files.items()},
                            torch.__version__)
    members = [(member, None) for member in files]
    members.append((_bundle.METADATA, _bundle.metadata_text(meta).encode('utf-8')))
    return members, files, meta


def load(name, compute_srcs, shape_srcs, extra_cflags=[], extra_include_paths=[],
         build_directory=None, multicore=False, verbose=False, *, target=None, timeout=None,
         sanitize=None):
    """Builds a library of custom ops and registers them.

    name: the library's name (lib<name>.so, lib<name>shapefcn.so,
    lib<name>customop.so).  compute_srcs: the kernels' C++ files.
    shape_srcs: the shape functions' C++ files, which register the ops with
    NEURON_LIBRARY (torchneuron/register.h).  extra_cflags: flags of both
    builds, but for a C++ standard (-std=...), which only the compute build
    gets (with a CustomOpWarning); extra_include_paths: include
    directories of the shape library.  build_directory: where lib<name>.so
    is written (no bundle without it).  multicore: eight compute libraries,
    one per GPSIMD core.  verbose: print each step and command.  target:
    'xtensa' or 'host' (default: $CUSTOM_OP_TARGET, else 'xtensa').
    timeout: the seconds a call of a host op may take (default:
    $CUSTOM_OP_TIMEOUT, else no limit), and the longest load() waits for a
    cache entry that another process is building.  sanitize: the compute
    build's sanitizers, as compile() takes them (host target only); the
    shape library is built as without them, with torch's flags (but
    -DTORCH_API_INCLUDE_EXTENSION_H: see docs/reference/python.md).

    On the host target, torch.ops.<ns>.<op> then runs the kernel on the
    emulated cores.  On the device target the ops are registered for
    torch-neuronx when it is importable; else the bundle is still built
    and a CustomOpWarning says that registering needs torch-neuronx.
    Raises CustomOpError (a BuildError) naming the failed step and file.
    """
    _run_load(name, compute_srcs, shape_srcs, extra_cflags, extra_include_paths,
              build_directory, multicore, verbose, target, register=True, timeout=timeout,
              sanitize=sanitize)


def _run_load(name, compute_srcs, shape_srcs, extra_cflags, extra_include_paths,
              build_directory, multicore, verbose, target, register, caller=None,
              timeout=None, sanitize=None):
    """load(); returns the bundle's path (None without a build_directory).
    caller names the call in messages (default: load('NAME')).  The digests
    of the files it read are kept for the next one (_fingerprint.py)."""
    try:
        with _torch_build.one_lookup():
            return _load_steps(name, compute_srcs, shape_srcs, extra_cflags,
                               extra_include_paths, build_directory, multicore, verbose, target,
                               register, caller, timeout, sanitize)
    finally:
        _torch_build.digests().save()


def _load_steps(name, compute_srcs, shape_srcs, extra_cflags, extra_include_paths,
                build_directory, multicore, verbose, target, register, caller, timeout,
                sanitize):
    target = _target(target)
    timeout = _timeout(timeout)
    _check_name(name, 'load' if caller is None else caller)
    compute_srcs = _files(compute_srcs, 'compute_srcs')
    shape_srcs = _files(shape_srcs, 'shape_srcs')
    extra_cflags = _strings(extra_cflags, 'extra_cflags')
    extra_include_paths = _strings(extra_include_paths, 'extra_include_paths')
    steps = _Steps('load', name, 6) if caller is None else _Steps(caller, None, 6)
    _check_readable(shape_srcs, 'shape sources', steps.function)
    _check_readable(compute_srcs, 'compute sources', steps.function)
    if build_directory is not None and os.path.exists(build_directory) and \
            not os.path.isdir(build_directory):
        raise CustomOpError(f'{steps.function}: the build_directory {build_directory} is not a '
                            'directory', 'arguments', path=os.fspath(build_directory))
    if build_directory is not None:
        _check_bundle_is_no_source(os.path.join(os.fspath(build_directory), f'lib{name}.so'),
                                   shape_srcs, compute_srcs, steps.function)

    _check_op_names(shape_srcs, target, steps)
    with _torch_build.waiting_at_most(timeout):
        try:
            shape_path, _ = _shape_library.build_and_load(
                name, shape_srcs, _shape_cflags(extra_cflags, steps.function),
                extra_include_paths, verbose)
        except _shape_library.ShapeLibraryError as error:
            raise steps.fail(1, 'building the shape library', str(error),
                             ', '.join(shape_srcs)) from None
        ops = _loaded_shape_ops(shape_path, steps, 2, 3)
        if verbose:
            for op in ops:
                print(f'schemas for {op.qualified}: {op.schema}')

        with _compute_directory(name, build_directory, compute_srcs, target,
                                steps) as directory:
            if verbose:
                print(f'Using build directory: {directory}')
            libraries = _compute_build(name, ops, compute_srcs, extra_cflags, multicore,
                                       verbose, target, directory, steps, sanitize)
            bundle_name = f'lib{name}.so'
            try:
                members, files, meta = _bundle_members(name, shape_path, libraries, directory,
                                                       ops, target)
            except OSError as error:
                raise steps.fail(5, 'making the bundle', error.strerror,
                                 error.filename) from None
        return _write_and_register(build_directory, bundle_name, members, files, meta,
                                   shape_path, ops, target, steps, register, verbose, timeout)


def _write_and_register(build_directory, bundle_name, members, files, meta, shape_path, ops,
                        target, steps, register, verbose, timeout):
    """Steps 5 (laying the bundle out and writing it) and 6 of load();
    returns the bundle's path.  When the cache records the bundle of these
    very members (_bundle.record_key), it is not laid out again: the file
    at the bundle's path is kept if it is byte for byte the recorded one
    (_bundle.kept), and without a build_directory the record's md5 names
    the extraction; the members' files are then not read.  Else the bundle
    is made, written and recorded."""
    bundle_path = None
    if build_directory is not None:
        bundle_path = os.path.join(os.fspath(build_directory), bundle_name)
    store = _torch_build.digests()
    bundle = _bundle.Bundle(bundle_path or bundle_name, None, members, meta, '', files, store)
    names = bundle.names()
    key = _bundle.record_key([(name,) + bundle.digest(name) for name in names])
    record = _bundle.recorded(_torch_build.record(_torch_build.BUNDLES, key))
    if record is not None and (bundle_path is None or _bundle.kept(bundle_path, record, store)):
        if verbose and bundle_path is not None:
            print(f'keeping {bundle_path}: it already holds {", ".join(names)}')
        bundle.md5 = record['md5']
    else:
        try:
            data = _bundle.build_archive([(name, bundle.member(name)) for name in names])
        except _bundle.BundleError as error:
            raise steps.fail(5, 'making the bundle', str(error)) from None
        if bundle_path is not None:
            try:
                if verbose:
                    print(f'writing {bundle_path}: {", ".join(names)}')
                _bundle.write_atomically(bundle_path, data)
            except OSError as error:
                raise steps.fail(5, 'writing the bundle', error.strerror,
                                 bundle_path) from None
        record = _bundle.record_of(data)
        bundle.data, bundle.md5 = data, record['md5']
        _torch_build.keep_record(_torch_build.BUNDLES, key, record)
    if register:
        try:
            _bundle.check_whole(bundle)
        except _bundle.BundleError as error:
            raise steps.fail(6, 'registering the ops', str(error), bundle.path) from None
        _register(bundle, shape_path, ops, target, steps, 6, verbose, timeout=timeout)
    return bundle_path


# What the record of sources whose op names passed the check holds.
_PASSED = {'op names': 'passed'}
# Bumped when what _op_names.check() reads or asks changes in a way
# _op_names_identity does not see (it hashes _op_names.py and the library
# that checks the names).
_OP_NAMES_FORMAT = 2


def _op_names_identity(paths, target, sha256):
    """The key of all that _op_names.check(paths, target) depends on: the
    files' paths and contents, the target, _op_names.py (found, not
    imported: a load() of sources that passed does not run it) and the
    library that checks the names (each file libbuildcustomop could be
    loaded from; none is loaded here).  sha256(path) gives a file's sha256
    (the fingerprint store's, _fingerprint.py: a file changed since it was
    last read is read again).  Raises OSError when a file cannot be read."""
    checker = [importlib.util.find_spec('build_custom_op._op_names').origin] + [
        path for path in _library.candidates(_library.BUILDER_FILE, _library.BUILDER_VARIABLE)
        if os.path.exists(path)]
    description = [_OP_NAMES_FORMAT, target,
                   [[os.path.abspath(path), sha256(path)] for path in list(paths) + checker]]
    return hashlib.sha256(json.dumps(description).encode('utf-8')).hexdigest()[:32]


def _check_op_names(shape_srcs, target, steps):
    """Before step 1: the names of the m.def calls the shape sources spell
    out, checked as compile() will check them at step 4 (_op_names.py),
    unless the cache records that these very sources passed the check for
    the target (_op_names_identity)."""
    try:
        key = _op_names_identity(shape_srcs, target, _torch_build.digests().sha256)
    except OSError:
        key = None   # the shape library's build says why
    if key is not None and _torch_build.record(_torch_build.OP_NAMES, key) == _PASSED:
        return
    from build_custom_op import _op_names
    try:
        _op_names.check(shape_srcs, target)
    except _op_names.RefusedName as error:
        where = error.registration
        if where is None:
            raise steps.fail(1, 'checking the ops of the shape sources', error.message,
                             ', '.join(shape_srcs)) from None
        raise steps.fail(1, 'checking the ops of the shape sources',
                         f'{where.path}:{where.line}: m.def("{where.op}", ..., "{where.fn}"): '
                         f'{error.message}', where.path) from None
    if key is not None:
        _torch_build.keep_record(_torch_build.OP_NAMES, key, _PASSED)


# The flags that choose a C++ standard start so.
_STANDARD = ('-std=', '--std=')


def _shape_cflags(extra_cflags, function):
    """The extra_cflags of the shape library: all but a C++ standard
    (-std=...), which goes to the compute build only, as the shape library
    is built in the standard PyTorch's headers need (cpp_extension's own
    -std=: C++14 for PyTorch 1.x, C++17 for 2.x).  A CustomOpWarning says
    so."""
    standards = [flag for flag in extra_cflags if flag.startswith(_STANDARD)]
    if standards:
        warnings.warn(f'{function}: {" ".join(standards)} of extra_cflags is passed to the '
                      'compute build only; the shape library is built in the C++ standard of '
                      f'PyTorch {torch.__version__} (torch.utils.cpp_extension\'s own -std=)',
                      CustomOpWarning, stacklevel=_caller_stacklevel())
    return [flag for flag in extra_cflags if not flag.startswith(_STANDARD)]


def _check_bundle_is_no_source(bundle_path, shape_srcs, compute_srcs, function):
    """Refuses, before anything is built, a bundle path that is one of the
    sources by another name (a symbolic or hard link): the bundle would
    replace it."""
    for kind, sources in (('shape source', shape_srcs), ('compute source', compute_srcs)):
        for source in sources:
            try:
                same = os.path.samefile(bundle_path, source)
            except OSError:
                same = False
            if same:
                raise CustomOpError(f'{function}: the bundle {bundle_path} is the {kind} '
                                    f'{source} (by another name): writing it would replace the '
                                    'source; write the bundle elsewhere', 'arguments',
                                    path=bundle_path)


# --- load_library() -------------------------------------------------------------

def load_library(libname, verbose=False, *, target=None, timeout=None):
    """Registers the ops of a lib<name>.so bundle that load() wrote.

    The bundle is extracted into a directory named by its md5 under
    /var/tmp/neuron-custom-ops (or $BUILD_CUSTOM_OP_BUNDLES), once: into a
    temporary directory that is then renamed.  Its metadata, shape library
    and compute libraries are checked; a bundle built for the other target
    is refused.  target, timeout: as for load().  Raises CustomOpError.
    """
    target = _target(target)
    timeout = _timeout(timeout)
    if isinstance(libname, bytes):
        libname = os.fsdecode(libname)
    if not isinstance(libname, (str, os.PathLike)):
        raise TypeError(f'libname must be a string, but found: {type(libname)}')
    libname = os.fspath(libname)
    steps = _Steps('load_library', libname, 4)
    try:
        bundle = _bundle.read(libname, target)
        bundle.store = _torch_build.digests()
    except _bundle.WrongTarget as error:
        raise steps.fail(1, 'reading the bundle',
                         f'{error}: load it with target={error.target!r} (or set '
                         f'{TARGET_VARIABLE}={error.target}), or build it again with '
                         f'custom_op.load(..., target={target!r})', libname) from None
    except _bundle.BundleError as error:
        raise steps.fail(1, 'reading the bundle', str(error), libname) from None
    built_with = bundle.metadata.get(_bundle.TORCH)
    if built_with is not None and built_with != torch.__version__:
        raise steps.fail(1, 'reading the bundle',
                         f'its shape library was compiled against PyTorch {built_with}, and this '
                         f'process runs PyTorch {torch.__version__}, which cannot load it: build '
                         'the bundle again with custom_op.load() under this PyTorch', libname)
    try:
        directory = _bundle.extract(bundle, verbose)
    except _bundle.BundleError as error:
        raise steps.fail(2, 'extracting the bundle', str(error), libname) from None
    shape_path = os.path.join(directory, bundle.shapelib)
    try:
        shape_path = _shape_library.load_library(shape_path, bundle.member(bundle.shapelib))
    except _shape_library.ShapeLibraryError as error:
        raise steps.fail(3, 'loading the shape library', str(error), shape_path) from None
    ops = _loaded_shape_ops(shape_path, steps, 3, 3)
    recorded = {(namespace, op): (fn, schema) for namespace, op, fn, schema in bundle.ops()}
    found = {(op.namespace, op.op): (op.fn, op.schema) for op in ops}
    if recorded != found:
        differences = sorted(set(recorded.items()) ^ set(found.items()))
        shown = '; '.join(f'{ns}::{op} -> {fn}, {schema}' for (ns, op), (fn, schema)
                          in differences)
        raise steps.fail(3, 'checking the shape library',
                         f'the ops of {bundle.shapelib} differ from those metadata.json '
                         f'records ({shown}); rebuild the bundle', libname)
    with _torch_build.waiting_at_most(timeout):
        _register(bundle, shape_path, ops, target, steps, 4, verbose, directory, timeout)
    bundle.store.save()


# --- registering ----------------------------------------------------------------

# (namespace, op) -> the shape function (the op the shape library defines).
_shape_functions = {}


def _shape_function(op):
    namespace = getattr(torch.ops, op.namespace)
    current = namespace.__dict__.get(op.op)
    if (op.namespace, op.op) in _shape_functions and current is not None and \
            not isinstance(current, torch._ops.OpOverloadPacket):
        return _shape_functions[(op.namespace, op.op)]
    function = getattr(namespace, op.op)
    _shape_functions[(op.namespace, op.op)] = function
    return function


def _register(bundle, shape_path, ops, target, steps, number, verbose, directory=None,
              timeout=None):
    """Registers the ops: on the host, kernels that run the compute
    functions; on the device, torch-neuronx's ops, put at
    torch.ops.<ns>.<op> as the original does."""
    try:
        if directory is None:
            directory = _bundle.extract(bundle, verbose)
    except _bundle.BundleError as error:
        raise steps.fail(number, 'registering the ops', str(error), bundle.path) from None
    if target == 'host':
        _register_host(bundle, directory, ops, steps, number, timeout)
        registered = {}
    else:
        computelibs = [os.path.join(directory, name) for name in bundle.computelibs]
        shapes = {op.qualified: _shape_function(op) for op in ops}
        registered = _register_device(bundle, computelibs, ops, shapes)
    for op in ops:
        if op.qualified in registered:
            setattr(getattr(torch.ops, op.namespace), op.op, registered[op.qualified])
        if verbose:
            print(f'registered torch.ops.{op.namespace}.{op.op}')


def _register_host(bundle, directory, ops, steps, number, timeout):
    from build_custom_op import _host_ops
    # Absolute: the build is opened again by this path after a time limit,
    # whatever the working directory is by then.
    base = os.path.join(os.path.abspath(directory),
                        _bundle.host_record_name(bundle.computelibs)[:-len('.ops')])
    try:
        _host_ops.register(base, ops, timeout)
    except _host_ops.RegistrationError as error:
        detail = str(error)
        if error.kind == 'build' and 'build-custom-op --target host' in detail:
            # The runner's advice is for whoever made the build.
            detail += (f'\n({bundle.path} holds these compute libraries, and one of them is '
                       'damaged: build the bundle again with custom_op.load(), or get an '
                       'undamaged copy of it)')
        raise steps.fail(number, 'registering the ops', detail, base) from None


class _NeedsNeuron:
    """torch.ops.<ns>.<op> of a device build when torch-neuronx is missing:
    calling it says so rather than running the shape function, whose
    result is not the op's."""

    def __init__(self, op):
        self.qualified = op.qualified
        self.__name__ = op.op

    def __call__(self, *args, **kwargs):
        raise CustomOpError(f'{self.qualified} is built for the device (target \'xtensa\'), '
                            'and running it needs torch-neuronx (pip install torch-neuronx); '
                            "build it with target='host' to run it on this machine's "
                            'emulated cores', 'running the op')


def _caller_stacklevel():
    """The stacklevel of warnings.warn that points at the first caller
    outside this package."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get('__name__', '').startswith(
            'build_custom_op'):
        frame = frame.f_back
        level += 1
    return level


def _register_device(bundle, computelibs, ops, shapes):
    try:
        from torch_neuronx.xla_impl.ops import CustomCppOp
    except ImportError:
        warnings.warn(f'{bundle.path}: registering the ops of the device target needs '
                      'torch-neuronx, which is not importable here; the bundle is built, '
                      f'and {", ".join(op.qualified for op in ops)} raise an error when '
                      "called (target='host' runs them on this machine)",
                      CustomOpWarning, stacklevel=_caller_stacklevel())
        return {op.qualified: _NeedsNeuron(op) for op in ops}
    versions = bundle.metadata['versions']
    return {op.qualified: CustomCppOp(op.fn, shapes[op.qualified], ','.join(computelibs),
                                      bundle.metadata['computelib']['id'],
                                      versions['ulib_to_ucode_version'],
                                      versions['ulib_to_isa_version'])
            for op in ops}
