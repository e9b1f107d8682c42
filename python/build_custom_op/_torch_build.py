"""_torch_build.py - C++ libraries built against the process's PyTorch
(shape libraries, the bridge of host ops), kept in a cache by content.

A library is built with torch.utils.cpp_extension (torch's own flags) into
an entry of the cache, named by a key that hashes what goes into the
compile: each source's path (compiled in as __FILE__) and contents, the
flags, the include paths, PyTorch, Python and the compiler.  The headers
the sources include (outside the system directories) are recorded after
each build with their contents' hashes, so a changed header rebuilds the
entry.  Looking an entry up reads no more than the recorded headers and
the library, and imports nothing of cpp_extension; a library that is not
whole (a cut file, which would kill the process with SIGBUS when loaded)
is built again.

The cache: $BUILD_CUSTOM_OP_CACHE, else $XDG_CACHE_HOME/build-custom-op,
else ~/.cache/build-custom-op; entries are KIND/KEY/ in it.  An entry is
built under an exclusive lock and read under a shared one.

Imports torch: only the PyTorch level loads this module.
"""

import contextlib
import fcntl
import hashlib
import io
import json
import os
import signal
import subprocess
import sys

import torch

from build_custom_op import _elf

# Bumped when what an entry holds changes shape.
_CACHE_FORMAT = 2
CACHE_VARIABLE = 'BUILD_CUSTOM_OP_CACHE'
_MANIFEST = 'manifest.json'
_LOCK = '.lock'


class TorchBuildError(Exception):
    """A library that could not be built or read; the message says which
    file and why."""


def cache_root():
    """The directory that holds the cache."""
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
    try:
        with contextlib.redirect_stderr(captured):
            import torch.utils.cpp_extension as cpp_extension
    except ModuleNotFoundError as error:
        if error.name != 'setuptools':
            raise
        # Python 3.12's virtual environments come without it.
        raise TorchBuildError(f'torch.utils.cpp_extension, which compiles against PyTorch, '
                              f'needs setuptools, which {sys.executable} cannot import: '
                              f'install it ({sys.executable} -m pip install setuptools)') \
            from None
    for line in captured.getvalue().splitlines(keepends=True):
        if not line.startswith('No CUDA runtime is found') and sys.stderr is not None:
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


def _digest(path):
    with open(path, 'rb') as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def _key(kind, sources, extra_cflags, include_paths):
    description = [_CACHE_FORMAT, kind, torch.__version__, os.path.dirname(torch.__file__),
                   sys.version, _compiler(), list(extra_cflags), list(include_paths)]
    for source in sources:
        try:
            description.append([source, _digest(source)])
        except OSError as error:
            raise TorchBuildError(f'cannot read {source}: {error.strerror}') from None
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]


@contextlib.contextmanager
def _locked(directory, mode):
    """Holds an flock (fcntl.LOCK_SH or LOCK_EX) on directory/.lock:
    released when the process ends, however it ends.  A shared lock only
    reads (a cache on a read-only file system can be used)."""
    path = os.path.join(directory, _LOCK)
    flags = os.O_RDONLY if mode == fcntl.LOCK_SH else os.O_RDWR | os.O_CREAT
    try:
        descriptor = os.open(path, flags | getattr(os, 'O_CLOEXEC', 0), 0o644)
    except FileNotFoundError:
        yield   # an entry that was never built whole: nothing to wait for
        return
    except OSError as error:
        raise TorchBuildError(f'cannot open the cache lock {path}: {error.strerror}; set '
                              f'{CACHE_VARIABLE} to a writable directory') from None
    try:
        fcntl.flock(descriptor, mode)
        yield
    finally:
        os.close(descriptor)


def _cached(directory):
    """(path, bytes) of the entry's library when the entry is complete and
    its headers are as recorded; else None."""
    try:
        with open(os.path.join(directory, _MANIFEST), 'rb') as stream:
            manifest = json.loads(stream.read().decode('utf-8'))
        for header, digest in manifest['headers']:
            if _digest(header) != digest:
                return None
        path = os.path.join(directory, manifest['library'])
        with open(path, 'rb') as stream:
            data = stream.read()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _elf.incomplete(data) is not None:
        return None
    return path, data


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
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: closed when Python started
            stream.flush()
    # With no sys.stdout, descriptor 1 may be a file of the program's.
    shown = verbose and sys.stdout is not None
    process = subprocess.Popen(command, stdout=1 if shown else subprocess.PIPE,
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


def _included_headers(directory, sources):
    """The headers ninja recorded for the entry's objects (the compiler's
    -MMD lists, which leave out the system directories), or None when
    ninja cannot say."""
    try:
        done = subprocess.run(['ninja', '-t', 'deps'], cwd=directory, capture_output=True)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    headers = []
    for line in done.stdout.decode('utf-8', 'surrogateescape').splitlines():
        if line.startswith((' ', '\t')) and line.strip():
            path = os.path.abspath(os.path.join(directory, line.strip()))
            if path not in sources and path not in headers:
                headers.append(path)
        elif line and '(VALID)' not in line:
            return None  # an object ninja has no up-to-date list for
    return headers


def _write_manifest(directory, library, headers):
    manifest = {'library': library, 'headers': [[header, _digest(header)] for header in headers]}
    temporary = os.path.join(directory, _MANIFEST + '.new')
    with open(temporary, 'w') as stream:
        json.dump(manifest, stream)
    os.replace(temporary, os.path.join(directory, _MANIFEST))


def build(kind, name, sources, extra_cflags, include_paths, verbose):
    """(path, bytes) of the library NAME.so built from sources, from the
    cache or built into it (then also loaded into the process, as
    cpp_extension does).  kind names the cache's part ('shape-libraries',
    'bridge'); name is the file's name in the entry."""
    sources = [os.path.abspath(os.fspath(source)) for source in sources]
    include_paths = [os.path.abspath(os.fspath(path)) for path in include_paths]
    extra_cflags = [os.fspath(flag) for flag in extra_cflags]
    directory = os.path.join(cache_root(), kind,
                             _key(kind, sources, extra_cflags, include_paths))
    if verbose:
        print(f'{kind}: {directory}')
    if os.path.isdir(directory):
        with _locked(directory, fcntl.LOCK_SH):
            found = _cached(directory)
        if found is not None:
            return found
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise TorchBuildError(f'cannot create the cache directory {directory}: '
                              f'{error.strerror}; set {CACHE_VARIABLE} to a writable '
                              'directory') from None
    with _locked(directory, fcntl.LOCK_EX):
        found = _cached(directory)
        if found is not None:
            return found
        return _build_entry(directory, name, sources, extra_cflags, include_paths, verbose)


def _build_entry(directory, name, sources, extra_cflags, include_paths, verbose):
    cpp_extension = _cpp_extension()
    path = os.path.join(directory, name + '.so')
    # cpp_extension's own lock file is left behind when a build is killed,
    # and then it waits for it forever; under our lock no other build of
    # this directory runs, so one there is stale.  A library that is not
    # whole is deleted: ninja would take it as up to date.
    for stale in ('lock', _MANIFEST):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(directory, stale))
    with contextlib.suppress(OSError):
        with open(path, 'rb') as stream:
            if _elf.incomplete(stream.read()) is not None:
                os.unlink(path)
    # cpp_extension renames a library it has built before in this process
    # with other inputs to NAME_v1; this cache keeps one name.
    versioner = getattr(cpp_extension, 'JIT_EXTENSION_VERSIONER', None)
    if versioner is not None and hasattr(versioner, 'entries'):
        versioner.entries.pop(name, None)
    try:
        with _ninja_stopped_gently(cpp_extension):
            cpp_extension.load(name=name, sources=sources, extra_cflags=extra_cflags,
                               extra_include_paths=include_paths, build_directory=directory,
                               is_python_module=False, verbose=verbose)
    except (RuntimeError, OSError, ValueError, ImportError) as error:
        message = str(error).rstrip()
        if 'Ninja is required' in message:
            message += ' (apt-get install ninja-build)'
        raise TorchBuildError(message) from None
    try:
        with open(path, 'rb') as stream:
            data = stream.read()
        headers = _included_headers(directory, sources)
        if headers is not None:
            _write_manifest(directory, name + '.so', headers)
    except OSError as error:
        raise TorchBuildError(f'cannot read or record {error.filename}: {error.strerror}') \
            from None
    return path, data
