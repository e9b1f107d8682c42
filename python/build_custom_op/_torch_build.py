"""_torch_build.py - C++ libraries built against the process's PyTorch
(shape libraries, the bridge of host ops), kept in a cache by content; and
the cache's entries of the compute builds of load() and its records (of
the bundles it made, bundles/KEY/record.json, see _bundle.py, of the
shape sources whose op names passed _op_names.py's check,
op-names/KEY/record.json, and of the compute builds that had nothing to
do, settled-builds/KEY/record.json, see custom_op._settled_build).

A library is built into an entry of the cache, named by a key that hashes
what goes into the compile: each source's path (compiled in as __FILE__)
and contents, the flags, the include paths, PyTorch, Python and the
compiler.  With a torch kit for this PyTorch (_torch_kit.py) a shape
library is compiled by running the compiler with the kit's flags, which
are cpp_extension's, and its precompiled header (the kit's flags and
header are then part of the key), and the bridge is the kit's own when
it was built from the same files; else torch.utils.cpp_extension builds.
The headers the sources include (outside the system directories) are
recorded after each build with their contents' hashes, so a changed header
rebuilds the entry.  Looking an entry up reads no more than the recorded
headers and the library's headers, and imports nothing of cpp_extension
(the hashes of files unchanged since they were read are known by their
stat fingerprints, kept in the cache's root: see digests() and
_fingerprint.py); a library that is not whole (a cut file, which would
kill the process with SIGBUS when loaded) is built again.

The cache: $BUILD_CUSTOM_OP_CACHE, else $XDG_CACHE_HOME/build-custom-op,
else ~/.cache/build-custom-op; entries are KIND/KEY/ in it.  An entry is
built under an exclusive lock and read under a shared one; a wait for the
lock is announced on stderr (with the process that holds it, when known)
and ends at the limit of waiting_at_most().  An entry is used only when
it, KIND/ and the cache's root are directories of this user that no one
else can write (_ownership.py): a library there is loaded into the
process.  SIGTERM and SIGHUP during a build, like SIGINT, stop the
compilers, empty the entry (as if the build had not begun) and then end
the process as they would have.

Imports torch: only the PyTorch level loads this module.
"""

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import torch

from build_custom_op import _elf
from build_custom_op import _fingerprint
from build_custom_op import _ownership
from build_custom_op import _torch_kit

# Bumped when what an entry holds changes shape.
_CACHE_FORMAT = 2
CACHE_VARIABLE = 'BUILD_CUSTOM_OP_CACHE'
_MANIFEST = 'manifest.json'
_LOCK = '.lock'
# How long a wait on an entry's lock goes on before it is announced, and
# the pause between two tries of the lock.
_NOTICE_SECONDS = 1.0
_POLL_SECONDS = 0.05
# What each kind of entry holds, for messages.
_WHAT = {'shape-libraries': 'the shape library', 'bridge': 'the bridge of host ops',
         'compute': 'the compute build'}


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


# The cache roots this process found to be directories of this user that
# no one else can write (each is checked once: a load() asks for the store
# about ten times).
_trusted_roots = set()


def digests():
    """The process's _fingerprint.Store, kept in the cache's root when that
    is a directory of this user that no one else can write (else one this
    process alone remembers)."""
    root = cache_root()
    if root not in _trusted_roots:
        if _ownership.directory_problem(root) is not None:
            return _fingerprint.store(None)
        _trusted_roots.add(root)
    return _fingerprint.store(root)


def _digest(path):
    """The sha256 of the file at path (known by its fingerprint when it
    is unchanged since it was last read)."""
    return digests().sha256(path)


def _key(kind, name, sources, extra_cflags, include_paths, kit=None, compiler=None):
    """The key of the entry of the library name (a shape library, named
    _torch_kit.SHAPE_LIBRARY_NAME, is compiled without
    SHAPE_LIBRARY_UNDEFINES) in the cache's part kind (compiler:
    _torch_kit.compiler()'s value, when known)."""
    if compiler is None:
        compiler = _torch_kit.compiler()
    description = [_CACHE_FORMAT, kind, torch.__version__, os.path.dirname(torch.__file__),
                   sys.version, compiler, list(extra_cflags), list(include_paths),
                   list(_torch_kit.LINK_FLAGS)]
    if name == _torch_kit.SHAPE_LIBRARY_NAME:
        description.append(list(_torch_kit.SHAPE_LIBRARY_UNDEFINES))
    if kit is not None:
        description.append(kit.compile_identity())
    for source in sources:
        try:
            description.append([source, _digest(source)])
        except OSError as error:
            raise TorchBuildError(f'cannot read {source}: {error.strerror}') from None
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]


# The limit of this thread's waits for a lock (see waiting_at_most).
_limits = threading.local()


@contextlib.contextmanager
def waiting_at_most(seconds):
    """Within the block, a wait of this thread for an entry's lock ends
    after seconds (None: no limit) with a TorchBuildError."""
    previous = getattr(_limits, 'seconds', None)
    _limits.seconds = seconds
    try:
        yield
    finally:
        _limits.seconds = previous


# The compiler and kit this thread's build() found, while a block of
# one_lookup() runs: found = {'compiler': ..., 'kit': ...} (see one_lookup).
_lookups = threading.local()


@contextlib.contextmanager
def one_lookup():
    """Within the block, build() searches PATH for the compiler and reads
    the torch kit once, and its later calls in this thread reuse what it
    found: a load() finds the shape library and the bridge, and a compiler
    or kit that changed in the middle of it would make the two disagree.
    A block inside another one adds nothing."""
    if getattr(_lookups, 'found', None) is not None:
        yield
        return
    _lookups.found = {}
    try:
        yield
    finally:
        _lookups.found = None


def _compiler_and_kit():
    """(_torch_kit.compiler(), _torch_kit.find() for it), once per block
    of one_lookup()."""
    found = getattr(_lookups, 'found', None)
    if found is not None and 'compiler' in found:
        return found['compiler'], found['kit']
    compiler = _torch_kit.compiler()   # PATH is searched, links followed
    kit = _torch_kit.find(compiler)
    if found is not None:
        found['compiler'], found['kit'] = compiler, kit
    return compiler, kit


def _holder(descriptor):
    """'process PID (COMMAND)' of the process that last took the lock to
    build, while it runs; else None."""
    try:
        text = os.pread(descriptor, 4096, 0).decode('utf-8', 'replace')
        pid = int(text.split('\n', 1)[0])
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    command = text.split('\n', 1)[1].strip() if '\n' in text else ''
    return f'process {pid} ({command})' if command else f'process {pid}'


def _command_line():
    try:
        with open('/proc/self/cmdline', 'rb') as stream:
            words = stream.read().split(b'\0')
    except OSError:
        words = [os.fsencode(word) for word in sys.argv]
    text = ' '.join(word.decode('utf-8', 'replace') for word in words if word)
    return text if len(text) <= 200 else text[:197] + '...'


def _take(descriptor, mode, directory, kind):
    """Takes the flock, announcing a wait on stderr after _NOTICE_SECONDS
    and giving up at this thread's limit."""
    started = time.monotonic()
    limit = getattr(_limits, 'seconds', None)
    announced = False
    while True:
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - started
        holder = _holder(descriptor)
        held = f'{holder} holds its lock' if holder else 'another process holds its lock'
        if limit is not None and waited >= limit:
            raise TorchBuildError(
                f'gave up waiting for {_WHAT.get(kind, kind)} in {directory} after {limit:g} s '
                f'(the timeout given to load()): {held}; try again when it is done, or give '
                'a longer timeout')
        if not announced and waited >= _NOTICE_SECONDS and sys.stderr is not None:
            sys.stderr.write(f'build_custom_op: waiting for {_WHAT.get(kind, kind)} in '
                             f'{directory}: {held}\n')
            sys.stderr.flush()
            announced = True
        time.sleep(_POLL_SECONDS)


@contextlib.contextmanager
def _locked(directory, mode, kind=None):
    """Holds an flock (fcntl.LOCK_SH or LOCK_EX) on directory/.lock:
    released when the process ends, however it ends.  A shared lock only
    reads (a cache on a read-only file system can be used); the holder of
    an exclusive one writes its pid and command line in the file, for the
    message of a process that waits."""
    path = os.path.join(directory, _LOCK)
    flags = os.O_RDONLY if mode == fcntl.LOCK_SH else os.O_RDWR | os.O_CREAT
    try:
        descriptor = os.open(path, flags | getattr(os, 'O_CLOEXEC', 0) | os.O_NOFOLLOW, 0o644)
    except FileNotFoundError:
        yield   # an entry that was never built whole: nothing to wait for
        return
    except OSError as error:
        raise TorchBuildError(f'cannot open the cache lock {path}: {error.strerror}; set '
                              f'{CACHE_VARIABLE} to a writable directory') from None
    try:
        _take(descriptor, mode, directory, kind)
        if mode == fcntl.LOCK_EX:
            with contextlib.suppress(OSError):
                record = f'{os.getpid()}\n{_command_line()}\n'.encode('utf-8')
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, record, 0)
        yield
    finally:
        os.close(descriptor)


def _read_private(path):
    """The bytes of path when it is a regular file of this user that no
    one else may write, else None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0))
    except OSError:
        return None
    with os.fdopen(descriptor, 'rb') as stream:
        if _ownership.file_problem(path, os.fstat(descriptor)) is not None:
            return None
        return stream.read()


def _cached(directory):
    """(path, sha256) of the entry's library when the entry is complete, its
    files are this user's and no one else's to write, and its headers are
    as recorded; else None."""
    try:
        manifest = json.loads(_read_private(os.path.join(directory, _MANIFEST)).decode('utf-8'))
        for header, digest in manifest['headers']:
            if _digest(header) != digest:
                return None
        path = os.path.join(directory, os.path.basename(manifest['library']))
        return whole_library(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def whole_library(path):
    """(path, sha256) of the library at path when it is a regular file of
    this user that no one else may write and a whole shared library (not
    one cut short, which would kill the process with SIGBUS when loaded),
    else None.  Reads its headers only, and its bytes when their digest is
    not known by its fingerprint."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0))
    except OSError:
        return None
    try:
        if _ownership.file_problem(path, os.fstat(descriptor)) is not None or \
                _elf.incomplete_file(descriptor) is not None:
            return None
        return path, _digest(path)
    except OSError:
        return None
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


# --- records ----------------------------------------------------------------------------

_RECORD = 'record.json'
# The kinds of records, each kept under KIND/KEY/record.json: the bundles
# load() made (_bundle.py), the shape sources whose op names passed the
# check before the build (_op_names.py), and the compute builds that had
# nothing to do, with what that rested on (custom_op._settled_build).
BUNDLES = 'bundles'
OP_NAMES = 'op-names'
SETTLED_BUILDS = 'settled-builds'


def record(kind, key):
    """The value kept under KIND/KEY/ (keep_record), or None when there is
    none, or none this user alone could have written."""
    try:
        directory = _entry(kind, key, create=False)
    except TorchBuildError:
        return None
    data = _read_private(os.path.join(directory, _RECORD))
    if data is None:
        return None
    try:
        return json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError):
        return None


def keep_record(kind, key, value):
    """Keeps value (JSON) under KIND/KEY/, replacing what was there in one
    rename.  A record only spares work: when the cache cannot take it (a
    read-only or untrusted cache, whose libraries' own step says so),
    nothing is kept and the next load() does the work again; returns
    whether it was kept."""
    try:
        directory = _entry(kind, key, create=True)
        descriptor, temporary = tempfile.mkstemp(prefix='.' + _RECORD + '.', dir=directory)
    except (TorchBuildError, OSError):
        return False
    try:
        with os.fdopen(descriptor, 'w') as stream:
            json.dump(value, stream)
        os.chmod(temporary, 0o644)
        os.replace(temporary, os.path.join(directory, _RECORD))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


# --- trust ------------------------------------------------------------------------------

def _untrusted(root, relative, create):
    """TorchBuildError for the entry root/relative when it or a directory
    above it up to root is not a directory of this user that no one else
    can write (created when missing, with create); else None."""
    problem = _ownership.chain_problem(root, relative, create)
    if problem is None:
        return None
    return TorchBuildError(
        f'the cache entry {os.path.join(root, relative)} is not safe to load from: {problem}, '
        'so a library there could have been put there by someone else. Make it a directory '
        f'of your own that no one else can write (chmod go-w, or remove it), or set '
        f'{CACHE_VARIABLE} to such a directory')


def _entry(kind, key, create):
    """The directory of the entry KIND/KEY, checked (see _untrusted) and,
    with create, made when missing."""
    root = cache_root()
    relative = os.path.join(kind, key)
    directory = os.path.join(root, relative)
    if create:
        try:
            os.makedirs(directory, mode=0o755, exist_ok=True)
        except OSError as error:
            raise TorchBuildError(f'cannot create the cache directory {directory}: '
                                  f'{error.strerror}; set {CACHE_VARIABLE} to a writable '
                                  'directory') from None
    problem = _untrusted(root, relative, create=False)
    if problem is not None:
        raise problem
    return directory


# --- stopping on SIGTERM and SIGHUP ------------------------------------------------------

class _Stopped(BaseException):
    """SIGTERM or SIGHUP arrived during a build (raised by their handler)."""

    def __init__(self, number):
        super().__init__(number)
        self.number = number


def _stopping_handler(number, frame):
    raise _Stopped(number)


@contextlib.contextmanager
def _stops_on_signals():
    """Within the block, SIGTERM and SIGHUP whose disposition is the
    default raise _Stopped, so that the build's clean-up runs (as for
    SIGINT's KeyboardInterrupt); after the block the disposition is put
    back and the signal raised again, which ends the process as it would
    have.  Python handles signals in the main thread only: elsewhere
    nothing changes."""
    changed = []
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(number) == signal.SIG_DFL:
                signal.signal(number, _stopping_handler)
                changed.append(number)
    try:
        yield
    except _Stopped as stopped:
        for number in changed:
            signal.signal(number, signal.SIG_DFL)
        changed = []
        signal.raise_signal(stopped.number)
        raise
    finally:
        for number in changed:
            signal.signal(number, signal.SIG_DFL)


def _empty(directory):
    """Leaves the entry as before its first build: its lock alone."""
    for name in os.listdir(directory):
        if name == _LOCK:
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)


# --- building -----------------------------------------------------------------------------

def build(kind, name, sources, extra_cflags, include_paths, verbose):
    """(path, sha256) of the library NAME.so built from sources, from the
    cache or built into it (with cpp_extension, then also loaded into the
    process, as cpp_extension does).  kind names the cache's part
    ('shape-libraries', 'bridge'); name is the file's name in the entry."""
    sources = [os.path.abspath(os.fspath(source)) for source in sources]
    include_paths = [os.path.abspath(os.fspath(path)) for path in include_paths]
    extra_cflags = [os.fspath(flag) for flag in extra_cflags]
    compiler, kit = _compiler_and_kit()
    if kit is not None and kind == 'bridge':
        found = kit.bridge(sources, extra_cflags, include_paths, _digest)
        if found is not None:
            if verbose:
                print(f'{kind}: {found[0]}')
            return found
    if kind == 'bridge':
        kit = None
    key = _key(kind, name, sources, extra_cflags, include_paths, kit, compiler)
    with _stops_on_signals():
        directory = os.path.join(cache_root(), kind, key)
        if verbose:
            print(f'{kind}: {directory}')
        if os.path.isdir(directory):
            _entry(kind, key, create=False)
            with _locked(directory, fcntl.LOCK_SH, kind):
                found = _cached(directory)
            if found is not None:
                return found
        directory = _entry(kind, key, create=True)
        with _locked(directory, fcntl.LOCK_EX, kind):
            found = _cached(directory)
            if found is not None:
                return found
            try:
                return _build_entry(directory, name, sources, extra_cflags, include_paths,
                                    verbose, kit)
            except Exception:
                raise
            except BaseException:
                _empty(directory)   # stopped: as if the build had not begun
                raise


@contextlib.contextmanager
def compute_entry(key):
    """The directory of the compute build KEY of the cache (checked as the
    libraries' entries are), held under its lock while the block runs; a
    signal that stops the block empties it, as for a library."""
    with _stops_on_signals():
        directory = _entry('compute', key, create=True)
        with _locked(directory, fcntl.LOCK_EX, 'compute'):
            try:
                yield directory
            except Exception:
                raise
            except BaseException:
                _empty(directory)
                raise


def _remove_untrusted(directory):
    """Deletes the files of the entry that are not this user's alone to
    write (a build then makes them again)."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not os.path.isdir(path) and _ownership.file_problem(path, info) is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _make_private(directory):
    """Takes away the write bits of group and others from the entry's
    files, which the compiler made as the umask let it."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if not os.path.islink(path):
                os.chmod(path, _ownership.private_mode(info.st_mode & 0o7777))


def _build_entry(directory, name, sources, extra_cflags, include_paths, verbose, kit):
    path = os.path.join(directory, name + '.so')
    # cpp_extension's own lock file is left behind when a build is killed,
    # and then it waits for it forever; under our lock no other build of
    # this directory runs, so one there is stale.  A library that is not
    # whole is deleted: ninja would take it as up to date.
    for stale in ('lock', _MANIFEST):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(directory, stale))
    _remove_untrusted(directory)
    with contextlib.suppress(OSError):
        with open(path, 'rb') as stream:
            if _elf.incomplete(stream.read()) is not None:
                os.unlink(path)
    if kit is not None:
        headers = _compile_with_kit(kit, directory, name, sources, extra_cflags,
                                    include_paths, verbose)
    else:
        _compile_with_cpp_extension(directory, name, sources, extra_cflags, include_paths,
                                    verbose)
        headers = None
    _make_private(directory)
    try:
        with open(path, 'rb') as stream:
            digest = hashlib.sha256(stream.read()).hexdigest()
        if headers is None:
            headers = _included_headers(directory, sources)
        if headers is not None:
            _write_manifest(directory, name + '.so', headers)
    except OSError as error:
        raise TorchBuildError(f'cannot read or record {error.filename}: {error.strerror}') \
            from None
    return path, digest


def _compile_with_cpp_extension(directory, name, sources, extra_cflags, include_paths, verbose):
    cpp_extension = _cpp_extension()
    # cpp_extension renames a library it has built before in this process
    # with other inputs to NAME_v1; this cache keeps one name.
    versioner = getattr(cpp_extension, 'JIT_EXTENSION_VERSIONER', None)
    if versioner is not None and hasattr(versioner, 'entries'):
        versioner.entries.pop(name, None)
    try:
        if name == _torch_kit.SHAPE_LIBRARY_NAME:
            # cpp_extension defines them before the extra flags.
            extra_cflags = list(extra_cflags) + ['-U' + macro for macro in
                                                 _torch_kit.SHAPE_LIBRARY_UNDEFINES]
        with _ninja_stopped_gently(cpp_extension):
            cpp_extension.load(name=name, sources=sources, extra_cflags=extra_cflags,
                               extra_include_paths=include_paths,
                               extra_ldflags=list(_torch_kit.LINK_FLAGS),
                               build_directory=directory, is_python_module=False,
                               verbose=verbose)
    except (RuntimeError, OSError, ValueError, ImportError) as error:
        message = str(error).rstrip()
        if 'Ninja is required' in message:
            message += ' (apt-get install ninja-build)'
        raise TorchBuildError(message) from None


def _compile_with_kit(kit, directory, name, sources, extra_cflags, include_paths, verbose):
    """Compiles and links NAME.so in directory as cpp_extension would, with
    the kit's flags and precompiled header; returns the headers the sources
    included (None when the compiler did not say)."""
    objects = [os.path.join(directory, base) for base in _torch_kit.object_names(sources)]
    prefix = f"Error building extension '{name}'"
    library = os.path.join(directory, name + '.so')
    compiles = [kit.compile_command(name, source, output, extra_cflags, include_paths)
                for source, output in zip(sources, objects)]
    try:
        # The compiles, as editors and tools read them.
        with open(os.path.join(directory, 'compile_commands.json'), 'w') as stream:
            json.dump([{'directory': directory, 'arguments': command, 'file': source,
                        'output': output}
                       for command, source, output in zip(compiles, sources, objects)],
                      stream, indent=1)
        _torch_kit.run_commands([(command, output + '.log')
                                 for command, output in zip(compiles, objects)],
                                directory, verbose, prefix)
        temporary = library + '.new'
        _torch_kit.run_commands([(kit.link_command(objects, temporary), library + '.log')],
                                directory, verbose, prefix)
        os.replace(temporary, library)
    except _torch_kit.KitError as error:
        raise TorchBuildError(str(error)) from None
    except OSError as error:
        raise TorchBuildError(f'{prefix}: {error.strerror}: {error.filename}') from None
    headers = []
    for output in objects:
        listed = _torch_kit.depfile_headers(output + '.d', sources)
        if listed is None:
            return None
        headers += [header for header in listed if header not in headers]
    return headers
