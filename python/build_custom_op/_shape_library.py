"""_shape_library.py - the shape library of custom_op.load(): built with
torch.utils.cpp_extension (torch's own flags), kept in a cache so that it is
not rebuilt when nothing changed, and read through torchneuron/register.h's
C functions.

The cache: $BUILD_CUSTOM_OP_CACHE, else $XDG_CACHE_HOME/build-custom-op,
else ~/.cache/build-custom-op; in it shape-libraries/<name>-<key>/, where
the key hashes the library name, each shape source's path and contents,
the flags, the include paths, torch and the compiler.  Inside, cpp_extension
and ninja build incrementally (ninja follows the headers the sources
include), under a lock, so two processes never build one directory at once.

Imports torch: only custom_op loads this module.
"""

import contextlib
import ctypes
import fcntl
import hashlib
import io
import json
import os
import signal
import subprocess
import sys

import torch

from build_custom_op._library import _TOP as _SOURCE_TREE, installed as _installed

# Bumped when what the cache holds changes shape.
_CACHE_FORMAT = 1
CACHE_VARIABLE = 'BUILD_CUSTOM_OP_CACHE'
INCLUDE_VARIABLE = 'BUILD_CUSTOM_OP_INCLUDE'
# `make install` replaces this with the directory register.h was installed under.
_INSTALLED_INCLUDEDIR = '@INCLUDEDIR@'
REGISTER_HEADER = os.path.join('torchneuron', 'register.h')
# The original reads names into 128-byte buffers; a longer name is read
# again with a buffer this large.
_NAME_BUFFER = 128
_LONG_NAME_BUFFER = 65536


class ShapeLibraryError(Exception):
    """A step of the shape library failed; the message says which file."""


def include_directory():
    """The directory that holds torchneuron/register.h: the source tree's
    sdk/torchneuron/include (in the source tree's copy of the package), the
    install's include directory, or $BUILD_CUSTOM_OP_INCLUDE."""
    candidates = []
    if not _installed():
        candidates.append(os.path.join(_SOURCE_TREE, 'sdk', 'torchneuron', 'include'))
    if not _INSTALLED_INCLUDEDIR.startswith('@'):
        candidates.append(_INSTALLED_INCLUDEDIR)
    if os.environ.get(INCLUDE_VARIABLE):
        candidates.append(os.environ[INCLUDE_VARIABLE])
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, REGISTER_HEADER)):
            return os.path.abspath(candidate)
    raise ShapeLibraryError(
        f'cannot find {REGISTER_HEADER} (looked in {", ".join(candidates)}); run make in the '
        f'build-custom-op source tree, make install, or set {INCLUDE_VARIABLE} to the '
        'directory that holds torchneuron/')


def cache_root():
    """The directory that holds the shape-library cache."""
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen:
        return os.path.abspath(chosen)
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(os.path.abspath(base), 'build-custom-op')


def _cpp_extension():
    """torch.utils.cpp_extension, imported without its note on stderr that
    this machine has no CUDA (anything else it prints is passed on)."""
    if 'torch.utils.cpp_extension' in sys.modules:
        return sys.modules['torch.utils.cpp_extension']
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        import torch.utils.cpp_extension as cpp_extension
    for line in captured.getvalue().splitlines(keepends=True):
        if not line.startswith('No CUDA runtime is found'):
            sys.stderr.write(line)
    return cpp_extension


def _compiler():
    """The C++ compiler cpp_extension runs, and what identifies its version."""
    name = os.environ.get('CXX', 'c++')
    path = None
    for directory in os.environ.get('PATH', '').split(os.pathsep):
        candidate = os.path.join(directory or '.', name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            path = os.path.realpath(candidate)
            break
    if path is None:
        return [name, None]
    info = os.stat(path)
    return [name, path, info.st_size, info.st_mtime_ns]


def _cache_key(name, sources, extra_cflags, include_paths):
    description = [_CACHE_FORMAT, name, torch.__version__, os.path.dirname(torch.__file__),
                   sys.version, _compiler(), list(extra_cflags), list(include_paths)]
    for source in sources:
        try:
            with open(source, 'rb') as stream:
                digest = hashlib.sha256(stream.read()).hexdigest()
        except OSError as error:
            raise ShapeLibraryError(f'cannot read the shape source {source}: '
                                    f'{error.strerror}') from None
        description.append([source, digest])
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]


@contextlib.contextmanager
def _locked(directory):
    """Holds an flock on directory/.lock: released when the process ends,
    however it ends."""
    descriptor = os.open(os.path.join(directory, '.lock'), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


# How long ninja has, after SIGINT, to stop the compilers it started.
_NINJA_STOP_SECONDS = 30


def _run_ninja(cpp_extension, build_directory, verbose, error_prefix):
    """cpp_extension's _run_ninja_build (same command, output and errors),
    except when it is interrupted.  ninja starts each compile in a process
    group of its own and, on SIGINT, stops those groups; subprocess.run
    would SIGKILL ninja instead, leaving the compilers to go on writing
    into the cache directory after its lock is released.  So ninja gets
    SIGINT and is waited for."""
    command = ['ninja', '-v']
    workers = cpp_extension._get_num_workers(verbose)
    if workers is not None:
        command += ['-j', str(workers)]
    sys.stdout.flush()
    sys.stderr.flush()
    process = subprocess.Popen(command, stdout=1 if verbose else subprocess.PIPE,
                               stderr=subprocess.STDOUT, cwd=build_directory,
                               env=os.environ.copy())
    try:
        output, _ = process.communicate()
    except BaseException:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(_NINJA_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        raise
    if process.returncode != 0:
        message = error_prefix
        if output:
            message += f': {output.decode()}'
        raise RuntimeError(message)


@contextlib.contextmanager
def _ninja_stopped_gently(cpp_extension):
    """Has cpp_extension run ninja through _run_ninja while the block runs;
    a cpp_extension without the function it replaces is left as it is."""
    original = getattr(cpp_extension, '_run_ninja_build', None)
    if original is None or not hasattr(cpp_extension, '_get_num_workers'):
        yield
        return
    cpp_extension._run_ninja_build = (
        lambda build_directory, verbose, error_prefix:
        _run_ninja(cpp_extension, build_directory, verbose, error_prefix))
    try:
        yield
    finally:
        cpp_extension._run_ninja_build = original


# realpath -> (st_dev, st_ino) of each shape library this process loaded,
# and the sha256 of each one's contents -> its path.
_loaded = {}
_loaded_contents = {}


def _identity(path):
    info = os.stat(path)
    return (info.st_dev, info.st_ino)


def _note_loaded(path):
    _loaded[os.path.realpath(path)] = _identity(path)
    with open(path, 'rb') as stream:
        _loaded_contents[hashlib.sha256(stream.read()).hexdigest()] = path


def load_library(path, data):
    """Loads the shape library at path (whose bytes are data) with
    torch.ops.load_library, unless this process already loaded the same
    library from elsewhere (load() loads it from the cache): a second copy
    would define its namespace a second time.  Returns the path in use."""
    known = _loaded_contents.get(hashlib.sha256(data).hexdigest())
    if known is not None and os.path.exists(known):
        return known
    try:
        torch.ops.load_library(path)
    except (OSError, RuntimeError) as error:
        raise ShapeLibraryError(f'cannot load {path}: {error}') from None
    _note_loaded(path)
    return path


def build_and_load(name, sources, extra_cflags, extra_include_paths, verbose):
    """Builds lib<name>shapefcn.so from the shape sources (or finds it up to
    date in the cache), loads it with torch.ops.load_library, and returns
    its path."""
    cpp_extension = _cpp_extension()
    sources = [os.path.abspath(os.fspath(source)) for source in sources]
    include_paths = [os.path.abspath(os.fspath(path)) for path in extra_include_paths]
    include_paths.append(include_directory())
    extra_cflags = [os.fspath(flag) for flag in extra_cflags]
    library = f'lib{name}shapefcn'
    directory = os.path.join(cache_root(), 'shape-libraries',
                             f'{name}-{_cache_key(name, sources, extra_cflags, include_paths)}')
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise ShapeLibraryError(f'cannot create the cache directory {directory}: '
                                f'{error.strerror}; set {CACHE_VARIABLE} to a writable '
                                'directory') from None
    path = os.path.join(directory, library + '.so')
    with _locked(directory):
        before = _loaded.get(os.path.realpath(path))
        # cpp_extension's own lock file is left behind when a build is
        # killed, and then it waits for it forever; under our lock no
        # other build of this directory runs, so one there is stale.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(directory, 'lock'))
        # cpp_extension renames a library it has built before in this
        # process with other inputs to NAME_v1; this cache keeps one name.
        versioner = getattr(cpp_extension, 'JIT_EXTENSION_VERSIONER', None)
        if versioner is not None and hasattr(versioner, 'entries'):
            versioner.entries.pop(library, None)
        if verbose:
            print(f'shape library: {path}')
        try:
            with _ninja_stopped_gently(cpp_extension):
                cpp_extension.load(name=library, sources=sources, extra_cflags=extra_cflags,
                                   extra_include_paths=include_paths,
                                   build_directory=directory, is_python_module=False,
                                   verbose=verbose)
        except (RuntimeError, OSError, ValueError, ImportError) as error:
            message = str(error).rstrip()
            if 'Ninja is required' in message:
                message += ' (apt-get install ninja-build)'
            raise ShapeLibraryError(message) from None
        if before is not None and before != _identity(path):
            raise ShapeLibraryError(
                f'{path} was rebuilt (a header it includes changed) after this process '
                'loaded it, and a process cannot load a changed library again: start a new '
                'Python process')
        _note_loaded(path)
    return path


# --- reading the ops through register.h's C functions ---------------------------------

def _name(function, *indices):
    """Calls char *function(indices..., char *buf, size_t max) as the
    original does, with a 128-byte buffer; a name that does not fit is
    read again with a larger one.  None when there is no such name."""
    for size in (_NAME_BUFFER, _LONG_NAME_BUFFER):
        buffer = ctypes.create_string_buffer(size)
        result = function(*[ctypes.c_int(i) for i in indices], buffer, ctypes.c_size_t(size))
        if result is not None:
            return result.decode('utf-8', 'replace')
    return None


def _declare(library):
    char_p, c_int, size_t = ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
    library.getNumNamespaces.restype = c_int
    library.getNumNamespaces.argtypes = []
    library.getNamespace.restype = char_p
    library.getNamespace.argtypes = [c_int, char_p, size_t]
    library.getNumNeuronOps.restype = c_int
    library.getNumNeuronOps.argtypes = [c_int]
    for function in ('getNeuronOpName', 'getNeuronFnName'):
        getattr(library, function).restype = char_p
        getattr(library, function).argtypes = [c_int, c_int, char_p, size_t]


class Op:
    """One op the shape library registers."""

    def __init__(self, namespace, op, fn, source):
        self.namespace = namespace
        self.op = op
        self.fn = fn
        self.source = source      # "FILE:LINE" of its m.def, or None
        self.schema = None        # the schema string, once formatted

    @property
    def qualified(self):
        return f'{self.namespace}::{self.op}'


def read_ops(path):
    """The (namespace, op, compute function) records of the loaded shape
    library at path, in registration order, as [Op]."""
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise ShapeLibraryError(f'cannot load {path}: {error}') from None
    try:
        _declare(library)
    except AttributeError:
        raise ShapeLibraryError(
            f'{path} does not export the functions of torchneuron/register.h: its shape '
            'sources must #include "torchneuron/register.h" and register their ops in a '
            'NEURON_LIBRARY block') from None
    extension = getattr(library, 'getNeuronRegistrationError', None)
    if extension is not None:
        extension.restype = ctypes.c_char_p
        extension.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        buffer = ctypes.create_string_buffer(4096)
        error = extension(buffer, ctypes.c_size_t(4096))
        if error is not None:
            raise ShapeLibraryError(
                f'{path}: PyTorch refused a registration: {error.decode("utf-8", "replace")}'
                '. A namespace can be defined by one library of a process: if an earlier '
                'version of this shape library is loaded, start a new Python process')
    source_of = getattr(library, 'getNeuronOpSource', None)
    if source_of is not None:
        source_of.restype = ctypes.c_char_p
        source_of.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    ops = []
    for i in range(library.getNumNamespaces()):
        namespace = _name(library.getNamespace, i)
        if namespace is None:
            raise ShapeLibraryError(f'{path}: getNamespace({i}) returned NULL')
        for j in range(library.getNumNeuronOps(i)):
            op = _name(library.getNeuronOpName, i, j)
            fn = _name(library.getNeuronFnName, i, j)
            if op is None or fn is None:
                raise ShapeLibraryError(f'{path}: the names of op {j} of namespace {namespace} '
                                        'cannot be read (NULL)')
            source = _name(source_of, i, j) if source_of is not None else None
            ops.append(Op(namespace, op, fn, source))
    if not ops:
        raise ShapeLibraryError(f'{path} registers no ops: its shape sources must register '
                                'them with m.def("op", &shape_function, "compute_function") '
                                'in a NEURON_LIBRARY block')
    return ops


def schema_string(op):
    """The schema string the original formats from PyTorch's parsed schema:
    "ns::op(TYPE NAME, ...) -> (TYPE NAME, ...)"."""
    schema = torch._C._get_schema(op.qualified, '')
    arguments = ', '.join(f'{argument.type} {argument.name}' for argument in schema.arguments)
    returns = ', '.join(f'{value.type} {value.name}' for value in schema.returns)
    return f'{schema.name}({arguments}) -> ({returns})'
