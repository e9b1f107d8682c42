"""_torch_kit.py - what is prepared for one PyTorch when the project is
built or installed, so that the first load() of an op does not compile
against PyTorch's headers from scratch: the torch kit.

A kit is a directory KITS/KEY/, KEY naming what it was made for (PyTorch's
version and place, Python's version, the C++ compiler as _torch_build keys
its cache).  It holds kit.json, written last, with:

  - the flags torch.utils.cpp_extension.load() gives a library's compile
    and link with this PyTorch (read from the build.ninja it writes for an
    empty source), so that a shape library is compiled by running the
    compiler directly, as cpp_extension would, without importing it or
    writing a ninja file;
  - with g++, a precompiled header of <torch/torch.h> for those flags
    (torch_pch.h and torch_pch.h.gch: most of a shape library's compile is
    reading that header).  A shape source gets it (-include) when nothing
    but comments, blank lines and standard headers comes before its
    #include of <torch/torch.h> or torchneuron/register.h, so that it
    compiles as written; g++ itself reads the header instead when the
    source's flags do not suit the precompiled one;
  - the bridge of host ops (sdk/torchneuron/bridge), built with its flags,
    and the digests of its source and of the headers it included: it is
    used only while those files are as they were.

KITS is the source tree's torch-kit/ (make), or the installation's
PKGLIBDIR/torch-kit (make install, pip install), or
$BUILD_CUSTOM_OP_TORCH_KIT ('none': no kit).  With no kit for the running
PyTorch, load() builds with cpp_extension as before.

    python3 -m build_custom_op._torch_kit KITS [--bridge SOURCE INCLUDE_DIR]
                                          [--no-pch]

makes the kit of the interpreter's PyTorch in KITS (nothing when it is
there and up to date).  Imports torch.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch

from build_custom_op import _elf
from build_custom_op import _ownership
from build_custom_op._library import installed_directory, source_tree

KIT_VARIABLE = 'BUILD_CUSTOM_OP_TORCH_KIT'
_FORMAT = 2
_KIT_FILE = 'kit.json'
_PCH_HEADER = 'torch_pch.h'
_PCH_TEXT = '#include <torch/torch.h>\n'
_BRIDGE_LIBRARY = 'torch_bridge.so'
# The flags of the bridge's compile, after the kit's own: the bridge of
# host ops (_host_ops.py) is built with them, and make() puts it in a kit.
# cpp_extension adds no optimisation flag of its own.
BRIDGE_FLAGS = ('-O2',)
# Added to the link of each library built for PyTorch here (the shape
# libraries, whether the kit or cpp_extension builds them, and the
# bridge): its calls to the functions it defines itself, mostly the inline
# functions of PyTorch's headers that it emits (some 3500 on a shape
# library), are bound when it is linked instead of being looked up in every
# library of the process when it is loaded, which made up about 60% of a
# shape library's dlopen.  Data (the statics of those functions) is still
# shared with the process; only the addresses of those functions taken in
# the library are its own copies'.
LINK_FLAGS = ('-Wl,-Bsymbolic-functions',)
# Left out of a shape library's compile, and of the precompiled header's
# (the bridge, which takes Python objects, keeps it): with it,
# <torch/torch.h> also includes <torch/extension.h>, so pybind11 and
# Python's headers, which a shape library does not use; their templates
# took a third of its compile on 1.13 (12.9 s with it, 10.1 s without, no
# precompiled header).  A shape source that uses them includes
# <torch/extension.h> itself.
SHAPE_LIBRARY_UNDEFINES = ('TORCH_API_INCLUDE_EXTENSION_H',)


def shape_library_flags(words):
    """words, a compile's flags, without the definitions a shape library
    leaves out (SHAPE_LIBRARY_UNDEFINES)."""
    dropped = {'-D' + name for name in SHAPE_LIBRARY_UNDEFINES}
    return [word for word in words if word not in dropped]


# The name every shape library is built under (its cache entry names it so).
SHAPE_LIBRARY_NAME = 'libshapefcn'
# Stand-ins for the user's include directories and flags in the flags
# cpp_extension writes.
_INCLUDE_MARK = '/BUILD_CUSTOM_OP_KIT_USER_INCLUDES'
_CFLAGS_MARK = '-DBUILD_CUSTOM_OP_KIT_USER_CFLAGS'


class KitError(Exception):
    """A kit that could not be made; or a compile or link of a library that
    failed (the message holds the command and what it printed)."""


def compiler():
    """The C++ compiler cpp_extension runs ($CXX, else c++), and what
    identifies its version: [name, realpath, size, mtime] (or [name, None]
    when it is not on PATH)."""
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


def identity(found=None):
    """What a kit is made for (found: compiler()'s value, when known)."""
    return [_FORMAT, torch.__version__, os.path.dirname(torch.__file__), sys.version,
            compiler() if found is None else found]


def _key(description):
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:24]


def digest(path):
    with open(path, 'rb') as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def roots():
    """The directories that hold kits, in the order they are tried."""
    chosen = os.environ.get(KIT_VARIABLE)
    if chosen:
        return [] if chosen == 'none' else [os.path.abspath(chosen)]
    tree = source_tree()
    if tree is not None:
        return [os.path.join(tree, 'torch-kit')]
    return [os.path.join(installed_directory('PKGLIBDIR'), 'torch-kit')]


def find(found=None):
    """The Kit of the running PyTorch and compiler, or None (found:
    compiler()'s value, when the caller has it)."""
    wanted = identity(found)
    key = _key(wanted)
    for root in roots():
        directory = os.path.join(root, key)
        try:
            with open(os.path.join(directory, _KIT_FILE), 'rb') as stream:
                record = json.loads(stream.read().decode('utf-8'))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get('identity') == json.loads(
                json.dumps(wanted, default=str)):
            try:
                return Kit(directory, record)
            except (KeyError, TypeError):
                continue
    return None


def _substituted(words, include_paths, extra_cflags):
    """The kit's flags with the user's include directories and flags in
    the places cpp_extension gives them."""
    result = []
    for word in words:
        if word == '-I' + _INCLUDE_MARK:
            result += ['-I' + path for path in include_paths]
        elif word == _CFLAGS_MARK:
            result += list(extra_cflags)
        else:
            result.append(word)
    return result


class Kit:
    """A kit found for the running PyTorch (see the module's text)."""

    def __init__(self, directory, record):
        self.directory = directory
        self.record = record
        self.cflags = [str(word) for word in record['cflags']]
        self.post_cflags = [str(word) for word in record['post_cflags']]
        self.ldflags = [str(word) for word in record['ldflags']]
        self.pch = record.get('pch')

    def compile_identity(self):
        """What a library compiled with the kit depends on beyond its own
        inputs (the flags, and the precompiled header's text and flags):
        part of the key of the cache entries the kit builds."""
        return [self.record['identity'], self.cflags, self.post_cflags, self.ldflags,
                self.pch and [_PCH_TEXT, self.pch['flags']]]

    def _pch_header(self):
        """The kit's torch_pch.h when its .gch is whole, else None."""
        if not self.pch:
            return None
        header = os.path.join(self.directory, _PCH_HEADER)
        try:
            if os.stat(header + '.gch').st_size != self.pch['size']:
                return None
        except OSError:
            return None
        return header

    def compile_command(self, name, source, output, extra_cflags, include_paths, pch=True):
        """The compile of source into the object output of the library
        name, with cpp_extension's flags (and the precompiled header when
        the source allows it)."""
        command = [compiler()[0], '-MMD', '-MF', output + '.d']
        flags = _substituted(self.cflags, include_paths, extra_cflags)
        if name == SHAPE_LIBRARY_NAME:
            flags = shape_library_flags(flags)
        command += [f'-DTORCH_EXTENSION_NAME={name}' if word.startswith('-DTORCH_EXTENSION_NAME=')
                    else word for word in flags]
        header = self._pch_header() if pch and name == SHAPE_LIBRARY_NAME and \
            _takes_precompiled_header(source) else None
        if header is not None:
            command += ['-include', header]
        return command + ['-c', source, '-o', output] + self.post_cflags

    def link_command(self, objects, output):
        return [compiler()[0]] + list(objects) + self.ldflags + list(LINK_FLAGS) + \
            ['-o', output]

    def bridge(self, sources, flags, include_paths, sha256=None):
        """(path, sha256) of the kit's bridge when it was built from these
        sources, flags and include directories as they are now, and it is
        whole, else None.  sha256(path): a file's digest (default: digest,
        which reads the file)."""
        sha256 = sha256 or digest
        recorded = self.record.get('bridge')
        if not recorded or len(sources) != 1 or len(include_paths) != 1 or \
                list(flags) != recorded['flags']:
            return None
        try:
            if sha256(sources[0]) != recorded['source']:
                return None
            for relative, expected in recorded['headers'].items():
                if sha256(os.path.join(include_paths[0], relative)) != expected:
                    return None
            path = os.path.join(self.directory, recorded['library'])
            with open(path, 'rb') as stream:
                if _elf.incomplete_file(stream.fileno()) is not None:
                    return None
            return path, sha256(path)
        except (OSError, KeyError, TypeError, AttributeError):
            return None


# --- when a source may take the precompiled header ------------------------------------

_OWN_INCLUDES = ('<torch/torch.h>', '"torchneuron/register.h"', '<torchneuron/register.h>')


def _without_comments(text):
    """text with its comments blanked (newlines kept), strings left alone."""
    result = []
    i = 0
    quote = None
    while i < len(text):
        c = text[i]
        if quote:
            result.append(c)
            if c == '\\' and i + 1 < len(text):
                result.append(text[i + 1])
                i += 1
            elif c == quote or c == '\n':
                quote = None
        elif text.startswith('//', i):
            end = text.find('\n', i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = len(text) if end < 0 else end + 2
            result.append(' ' + '\n' * text.count('\n', i, end))
            i = end
            continue
        else:
            if c in '"\'':
                quote = c
            result.append(c)
        i += 1
    return ''.join(result)


def _takes_precompiled_header(source):
    """Whether source includes <torch/torch.h> or torchneuron/register.h
    before anything but comments, blank lines, #pragma once and standard
    headers (<name>): then having <torch/torch.h> read first changes
    nothing."""
    try:
        with open(source, encoding='utf-8', errors='replace') as stream:
            text = _without_comments(stream.read())
    except OSError:
        return False
    for line in text.replace('\\\n', '').splitlines():
        words = line.strip()
        if not words:
            continue
        if not words.startswith('#'):
            return False
        directive = words[1:].strip()
        if directive.startswith('include'):
            target = directive[len('include'):].strip()
            if target in _OWN_INCLUDES:
                return True
            name = target[1:-1]
            if target.startswith('<') and target.endswith('>') and name and \
                    all(c.isalnum() or c == '_' for c in name):
                continue
            return False
        if directive.split() == ['pragma', 'once']:
            continue
        return False
    return False


# --- running the compiler ---------------------------------------------------------------

def _shown(command):
    import shlex   # here: a load() that compiles nothing needs none of it
    return ' '.join(shlex.quote(word) for word in command)


def _stop(process):
    """Ends a compiler and whatever it started (its own process group)."""
    if process.poll() is not None:
        return
    for number, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, number)
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_commands(commands, directory, verbose, error_prefix, workers=None):
    """Runs the commands (argv lists, each with the path of its log), at most
    workers at a time (default: one per CPU), each in a process group of its
    own, without a shell.  Raises KitError with the first failure's command
    and output.  Interrupted (KeyboardInterrupt, or any exception while
    waiting), it stops every command it started before passing it on."""
    workers = workers or os.cpu_count() or 1
    pending = list(commands)
    running = []
    failure = None
    try:
        while pending or running:
            while pending and len(running) < workers and failure is None:
                command, log = pending.pop(0)
                if verbose:
                    print(_shown(command), flush=True)
                with open(log, 'wb') as output:
                    running.append((subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                                     stdout=output, stderr=subprocess.STDOUT,
                                                     cwd=directory, start_new_session=True),
                                    command, log))
            if not running:
                break
            done = _wait_any([process for process, _, _ in running])
            entry = next(item for item in running if item[0] is done)
            running.remove(entry)
            process, command, log = entry
            with open(log, 'rb') as stream:
                text = stream.read().decode('utf-8', 'replace')
            if verbose and text and sys.stdout is not None:
                sys.stdout.write(text)
            if process.returncode != 0 and failure is None:
                failure = f'{error_prefix}: FAILED: {_shown(command)}\n{text}'.rstrip()
                pending.clear()
    except BaseException:
        for process, _, _ in running:
            _stop(process)
        raise
    if failure is not None:
        raise KitError(failure)


def _wait_any(processes):
    """The first of processes to end (waited for)."""
    while True:
        for process in processes:
            if process.poll() is not None:
                return process
        time.sleep(0.02)


def depfile_headers(path, sources):
    """The files a -MMD depfile lists, but the sources."""
    try:
        with open(path, encoding='utf-8', errors='surrogateescape') as stream:
            text = stream.read()
    except OSError:
        return None
    text = text.replace('\\\n', ' ')
    _, _, dependencies = text.partition(': ')
    words, current, i = [], '', 0
    while i < len(dependencies):
        c = dependencies[i]
        if c == '\\' and i + 1 < len(dependencies) and dependencies[i + 1] in ' #':
            current += dependencies[i + 1]
            i += 2
            continue
        if c == '$' and dependencies.startswith('$$', i):
            current += '$'
            i += 2
            continue
        if c.isspace():
            if current:
                words.append(current)
            current = ''
            if c == '\n':
                break   # the empty targets of -MP come after
        else:
            current += c
        i += 1
    if current:
        words.append(current)
    directory = os.path.dirname(path)
    headers = []
    for word in words:
        absolute = os.path.abspath(os.path.join(directory, word))
        if absolute not in sources and absolute not in headers:
            headers.append(absolute)
    return headers


def object_names(sources):
    """The object of each source, named by its base name as cpp_extension
    names them (a number added when two base names are the same)."""
    names = []
    for index, source in enumerate(sources):
        stem = os.path.splitext(os.path.basename(source))[0]
        name = stem + '.o'
        if name in names:
            name = f'{stem}.{index}.o'
        names.append(name)
    return names


# --- making a kit ---------------------------------------------------------------------

def _cpp_extension():
    """torch.utils.cpp_extension, without its note that there is no CUDA."""
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        import torch.utils.cpp_extension as cpp_extension
    for line in captured.getvalue().splitlines(keepends=True):
        if not line.startswith('No CUDA runtime is found'):
            sys.stderr.write(line)
    return cpp_extension


def _ninja_words(value):
    """The words of a build.ninja variable's value (ninja's $-escapes
    undone, then split as the shell ninja runs it would)."""
    plain = value.replace('$$', '\0').replace('$ ', ' ').replace('$:', ':').replace('\0', '$')
    import shlex
    return shlex.split(plain)


def _extension_flags(work):
    """(cflags, post_cflags, ldflags) of cpp_extension.load() for a library
    named SHAPE_LIBRARY_NAME, with the marks where the user's include
    directories and flags go."""
    source = os.path.join(work, 'empty.cpp')
    with open(source, 'w') as stream:
        stream.write('// the flags of cpp_extension\n')
    build = os.path.join(work, 'flags')
    os.mkdir(build)
    cpp_extension = _cpp_extension()
    cpp_extension.load(name=SHAPE_LIBRARY_NAME, sources=[source], extra_cflags=[_CFLAGS_MARK],
                       extra_include_paths=[_INCLUDE_MARK], build_directory=build,
                       is_python_module=False, verbose=False)
    values = {}
    with open(os.path.join(build, 'build.ninja')) as stream:
        for line in stream:
            name, equals, value = line.partition(' = ')
            if equals and not line.startswith(' '):
                values[name.strip()] = value.rstrip('\n')
    cflags = _ninja_words(values.get('cflags', ''))
    if ('-I' + _INCLUDE_MARK) not in cflags or _CFLAGS_MARK not in cflags:
        raise KitError('the flags cpp_extension wrote do not hold the include directories and '
                       'flags given to it: this PyTorch is not one the kit knows')
    return cflags, _ninja_words(values.get('post_cflags', '')), \
        _ninja_words(values.get('ldflags', ''))


def _is_gcc():
    try:
        done = subprocess.run([compiler()[0], '--version'], capture_output=True, text=True)
    except OSError:
        return False
    return done.returncode == 0 and 'Free Software Foundation' in done.stdout and \
        'clang' not in done.stdout


def make(root, bridge=None, pch=True, verbose=False):
    """Makes the kit of this PyTorch under root (see the module's text);
    bridge: (source, include directory) of the bridge to build, or None.
    Returns the kit's directory."""
    root = os.path.abspath(root)
    wanted = identity()
    directory = os.path.join(root, _key(wanted))
    current = find_in(directory, wanted)
    if current is not None and _up_to_date(current, bridge, pch):
        return directory
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix='.kit.', dir=root)
    try:
        cflags, post_cflags, ldflags = _extension_flags(work)
        record = {'identity': json.loads(json.dumps(wanted, default=str)), 'cflags': cflags,
                  'post_cflags': post_cflags, 'ldflags': ldflags, 'pch': None, 'bridge': None}
        kit = Kit(work, record)
        commands = []
        plain = _substituted(cflags, [], [])
        if pch and _is_gcc():
            header = os.path.join(work, _PCH_HEADER)
            with open(header, 'w') as stream:
                stream.write(_PCH_TEXT)
            flags = shape_library_flags(plain) + post_cflags
            record['pch'] = {'flags': flags}
            if current is not None and current.cflags == cflags and \
                    current.post_cflags == post_cflags and current._pch_header() is not None:
                # The kit's precompiled header still serves (only the bridge
                # changed): kept, not made again.
                try:
                    os.link(current._pch_header() + '.gch', header + '.gch')
                except OSError:
                    shutil.copyfile(current._pch_header() + '.gch', header + '.gch')
            else:
                commands.append(([compiler()[0]] + flags + ['-x', 'c++-header', header, '-o',
                                                             header + '.gch'],
                                 os.path.join(work, 'pch.log')))
        if bridge is not None:
            source, include = (os.path.abspath(path) for path in bridge)
            bridge_flags = list(BRIDGE_FLAGS)
            objects = os.path.join(work, 'torch_bridge.o')
            commands.append((kit.compile_command('torch_bridge', source, objects, bridge_flags,
                                                 [include], pch=False),
                             os.path.join(work, 'bridge.log')))
        run_commands(commands, work, verbose, 'making the torch kit')
        if record['pch']:
            record['pch']['size'] = os.stat(os.path.join(work, _PCH_HEADER + '.gch')).st_size
        if bridge is not None:
            library = os.path.join(work, _BRIDGE_LIBRARY)
            run_commands([(kit.link_command([objects], library),
                           os.path.join(work, 'bridge-link.log'))], work, verbose,
                         'making the torch kit')
            headers = depfile_headers(objects + '.d', [source])
            record['bridge'] = {
                'library': _BRIDGE_LIBRARY, 'source': digest(source), 'flags': bridge_flags,
                'headers': {os.path.relpath(header, include): digest(header)
                            for header in headers or []
                            if os.path.commonpath([header, include]) == include}}
        for leftover in os.listdir(work):
            if leftover.endswith(('.o', '.d', '.log')) or leftover in ('flags', 'empty.cpp'):
                path = os.path.join(work, leftover)
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
        with open(os.path.join(work, _KIT_FILE), 'w') as stream:
            json.dump(record, stream, indent=1)
        os.chmod(work, 0o755)
        for name in os.listdir(work):
            path = os.path.join(work, name)
            os.chmod(path, _ownership.private_mode(0o755 if name.endswith('.so') else 0o644))
        if os.path.isdir(directory):
            shutil.rmtree(directory)
        os.rename(work, directory)
    finally:
        if os.path.isdir(work):
            shutil.rmtree(work, ignore_errors=True)
    return directory


def find_in(directory, wanted):
    try:
        with open(os.path.join(directory, _KIT_FILE), 'rb') as stream:
            record = json.loads(stream.read().decode('utf-8'))
        if record.get('identity') != json.loads(json.dumps(wanted, default=str)):
            return None
        return Kit(directory, record)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _up_to_date(kit, bridge, pch):
    if pch and _is_gcc() and kit._pch_header() is None:
        return False
    if bridge is not None:
        source, include = (os.path.abspath(path) for path in bridge)
        if kit.bridge([source], list(BRIDGE_FLAGS), [include]) is None:
            return False
    return True


def main(arguments):
    usage = ('usage: python3 -m build_custom_op._torch_kit KITS [--bridge SOURCE INCLUDE_DIR] '
             '[--no-pch] [-v]')
    if not arguments or arguments[0].startswith('-'):
        sys.exit(usage)
    root, rest = arguments[0], arguments[1:]
    bridge, pch, verbose = None, True, False
    while rest:
        if rest[0] == '--bridge' and len(rest) >= 3:
            bridge, rest = (rest[1], rest[2]), rest[3:]
        elif rest[0] == '--no-pch':
            pch, rest = False, rest[1:]
        elif rest[0] == '-v':
            verbose, rest = True, rest[1:]
        else:
            sys.exit(usage)
    try:
        directory = make(root, bridge, pch, verbose)
    except (KitError, OSError, RuntimeError) as error:
        sys.exit(f'torch kit: {error}')
    print(directory)


if __name__ == '__main__':
    main(sys.argv[1:])
