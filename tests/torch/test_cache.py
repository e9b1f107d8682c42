"""test_cache.py - the caches of load() (shape libraries, the bridge of host
ops, compute builds) against what else may happen to them: SIGTERM and
SIGHUP during a build stop every process it started and leave the entry as
if the build had not begun; a wait for an entry another process holds is
announced on stderr, with that process, and ends at load()'s timeout; an
entry is used only when it, its kind's directory and the cache's root are
directories of this user that no one else can write, and its files too
(anything else is refused, naming the path and what to do, or built
again); a library planted in such an entry is never loaded."""

import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

PYTHONPATH = tap.PACKAGE_DIRECTORY

# A C++ compiler that, asked to compile a source named $FAKE_SLOW, writes its
# pid and waits; anything else goes to the real one.
FAKE_COMPILER = """#!/bin/sh
for argument in "$@"; do
	case $argument in
	*"$FAKE_SLOW")
		echo $$ >"$FAKE_WORK/compiler.pid.new"
		mv "$FAKE_WORK/compiler.pid.new" "$FAKE_WORK/compiler.pid"
		exec sleep 120 ;;
	esac
done
exec "$REAL_CXX" "$@"
"""

# Sends itself a signal (as `kill -TERM` of the Python process alone would)
# once the slow compile has started; what to build: the shape library
# (argv[2] = 'shape') or the compute build of load() (argv[2] = 'compute').
SIGNALLED_LOAD = """
import os, signal, sys, threading, time
pid_file = os.path.join(os.environ['FAKE_WORK'], 'compiler.pid')
def stop():
    while not os.path.exists(pid_file):
        time.sleep(0.02)
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
threading.Thread(target=stop, daemon=True).start()
if sys.argv[2] == 'shape':
    from build_custom_op import _shape_library
    _shape_library.build_and_load('stopped', [sys.argv[3]], [], [], False)
else:
    from build_custom_op import custom_op
    custom_op.load('stopped', [sys.argv[4]], [sys.argv[3]], target='host')
print('not stopped')
"""

# Loads the other fixture's shape library, within a limit of waiting.
LOAD = """
import sys
from build_custom_op import _shape_library, _torch_build
limit = float(sys.argv[2]) if len(sys.argv) > 2 else None
try:
    with _torch_build.waiting_at_most(limit):
        path, _ = _shape_library.build_and_load('other', [sys.argv[1]], [], [], False)
    print(path)
except _shape_library.ShapeLibraryError as error:
    print(error)
"""

# A shape library whose constructor leaves a mark: what another user would plant.
PLANTED = """
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void)
{
	FILE *mark = fopen(getenv("PLANTED_MARK"), "w");
	if (mark)
		fclose(mark);
}
"""


KERNELS = """#include <torch/torch.h>
torch::Tensor only_here(const torch::Tensor &x)
{
    return x;
}
"""


def setUpModule():
    from build_custom_op import _shape_library
    _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)


class Work(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-cache-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.cache = os.path.join(self.work, 'cache')

    def environment(self, **extra):
        environment = dict(os.environ, PYTHONPATH=PYTHONPATH, BUILD_CUSTOM_OP_CACHE=self.cache,
                           BUILD_CUSTOM_OP_BUNDLES=os.path.join(self.work, 'bundles'), **extra)
        environment.pop('CXX', None)
        return environment

    def private_copy(self):
        """A copy, in this test's cache, of the entry of the other fixture's
        shape library; its path."""
        from build_custom_op import _shape_library
        path, _ = _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)
        entry = os.path.dirname(path)
        copy = os.path.join(self.cache, os.path.relpath(entry, _shape_library.cache_root()))
        shutil.copytree(entry, copy)
        return copy

    def kernels(self):
        """A compute source for the other fixture's op."""
        path = os.path.join(self.work, 'kernels.cpp')
        with open(path, 'w') as stream:
            stream.write(KERNELS)
        return path

    def python(self, script, *arguments, bound=600, **extra):
        """Runs the script in a fresh process (ended after bound seconds)."""
        return subprocess.run([sys.executable, '-c', script] + list(arguments),
                              env=self.environment(**extra), capture_output=True, text=True,
                              timeout=bound)


class StopTest(Work):
    """SIGTERM and SIGHUP during a build, as SIGINT."""

    def fake_tools(self, *names):
        real = shutil.which('c++')
        tools = os.path.join(self.work, 'bin')
        os.mkdir(tools)
        for name in names:
            with open(os.path.join(tools, name), 'w') as stream:
                stream.write(FAKE_COMPILER)
            os.chmod(os.path.join(tools, name), 0o755)
        return dict(FAKE_WORK=self.work, REAL_CXX=real,
                    PATH=tools + os.pathsep + os.environ.get('PATH', ''))

    def stop(self, number, what, kit=None):
        """Runs SIGNALLED_LOAD with the fake compiler; returns the cache's
        entries of that kind and the process's return code."""
        # The shape library is built with c++ (cpp_extension's), the compute
        # build with clang++ (build-custom-op's, for the host).
        tools = self.fake_tools('c++' if what == 'shape' else 'clang++')
        extra = dict(tools, FAKE_SLOW='shape_other.cpp' if what == 'shape' else 'kernels.cpp')
        if kit is not None:
            extra['BUILD_CUSTOM_OP_TORCH_KIT'] = kit
        done = self.python(SIGNALLED_LOAD, number.name, what, fixture.OTHER_SHAPES[0],
                           self.kernels(), **extra)
        with open(os.path.join(self.work, 'compiler.pid')) as stream:
            pid = int(stream.read())
        self.addCleanup(lambda: fixture.running(pid) and os.kill(pid, signal.SIGKILL))
        self.assertFalse(fixture.running(pid), 'the compiler outlived the load() that was stopped')
        self.assertEqual(done.returncode, -number, done.stdout + done.stderr)
        kind = os.path.join(self.cache, 'shape-libraries' if what == 'shape' else 'compute')
        return {entry: sorted(os.listdir(os.path.join(kind, entry)))
                for entry in os.listdir(kind)}

    def test_sigterm_during_a_shape_library_build(self):
        # No kit knows the fake compiler: cpp_extension and ninja build.
        for number in (signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=number.name):
                shutil.rmtree(self.work)
                os.mkdir(self.work)
                entries = self.stop(number, 'shape')
                self.assertEqual(list(entries.values()), [['.lock']])

    def test_sigterm_during_a_shape_library_build_with_the_kit(self):
        tools = self.fake_tools('c++')
        kits = os.path.join(self.work, 'kits')
        done = subprocess.run([sys.executable, '-m', 'build_custom_op._torch_kit', kits,
                               '--no-pch'], env=self.environment(FAKE_SLOW='shape_other.cpp',
                                                                 **tools),
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        shutil.rmtree(os.path.join(self.work, 'bin'))
        entries = self.stop(signal.SIGTERM, 'shape', kit=kits)
        self.assertEqual(list(entries.values()), [['.lock']])

    def test_sigterm_during_a_compute_build(self):
        self.private_copy()
        entries = self.stop(signal.SIGTERM, 'compute')
        self.assertEqual(list(entries.values()), [['.lock']])


def self_bound_functions(library):
    """The functions that library defines and whose calls or addresses are
    left to a dynamic relocation (looked up in the process when it is
    loaded), as readelf shows them."""
    def words(*options):
        done = subprocess.run(['readelf', '-W'] + list(options) + [library],
                              capture_output=True, text=True, check=True)
        return [line.split() for line in done.stdout.splitlines()]
    defined = {fields[7].split('@')[0] for fields in words('--dyn-syms')
               if len(fields) >= 8 and fields[3] == 'FUNC' and fields[6] != 'UND'}
    relocated = {fields[4].split('@')[0] for fields in words('-r')
                 if len(fields) >= 5 and fields[2].endswith(('_JUMP_SLOT', '_GLOB_DAT'))}
    return sorted(defined & relocated)


class KitTest(Work):
    """The torch kit's precompiled header: given to a shape source only when
    having <torch/torch.h> read first changes nothing."""

    def test_which_sources_take_the_precompiled_header(self):
        from build_custom_op import _torch_kit
        cases = [
            ('#include <torch/torch.h>\n', True),
            ('/* a comment\n#define X */\n// another\n\n#include "torchneuron/register.h"\n',
             True),
            ('#pragma once\n#include <vector>\n#include <cstdint>\n#include <torch/torch.h>\n',
             True),
            ('#define TORCH_ASSERT_ONLY_METHOD_OPERATORS\n#include <torch/torch.h>\n', False),
            ('#include <ATen/core/dispatch/Dispatcher.h>\n#include <torch/torch.h>\n', False),
            ('#include "config.h"\n#include <torch/torch.h>\n', False),
            ('int x;\n#include <torch/torch.h>\n', False),
            ('#include <ATen/ATen.h>\n', False),
            ('#if 1\n#include <torch/torch.h>\n#endif\n', False),
        ]
        for text, expected in cases:
            with self.subTest(text=text):
                path = os.path.join(self.work, 'shape.cpp')
                with open(path, 'w') as stream:
                    stream.write(text)
                self.assertEqual(_torch_kit._takes_precompiled_header(path), expected)

    def test_a_shape_library_is_compiled_with_the_kit(self):
        from build_custom_op import _shape_library, _torch_kit
        kit = _torch_kit.find()
        if kit is None:
            self.skipTest('no torch kit for this PyTorch: make (or make torch-kit '
                          'TORCH_PYTHON=this interpreter) makes one')
        shape = os.path.join(fixture.MLP, 'shape.cpp')
        other = os.path.join(self.work, 'other.cpp')
        with open(other, 'w') as stream:
            stream.write('#include <stdint.h>\nint64_t a_shape_library_also_holds = 1;\n')
        done = self.python('import sys\n'
                           'from build_custom_op import _shape_library\n'
                           'path, _ = _shape_library.build_and_load("relu", sys.argv[1:], [], '
                           '[], False)\n'
                           'print(path)\n', shape, other)
        self.assertEqual(done.returncode, 0, done.stderr)
        entry = os.path.dirname(done.stdout.strip())
        with open(os.path.join(entry, 'compile_commands.json')) as stream:
            commands = {os.path.basename(item['file']): item['arguments']
                        for item in json.load(stream)}
        header = os.path.join(kit.directory, 'torch_pch.h')
        # shape.cpp begins with <torch/torch.h>; other.cpp with another header.
        self.assertEqual([('-include' in command and header in command)
                          for command in (commands['shape.cpp'], commands['other.cpp'])],
                         [bool(kit.pch), False])
        # g++ read the precompiled header, not torch_pch.h itself.
        with open(os.path.join(entry, 'shape.o.d')) as stream:
            depended = stream.read()
        self.assertNotIn('torch_pch.h', depended)
        # Neither the compiles nor the precompiled header define what makes
        # <torch/torch.h> include <torch/extension.h> (pybind11, Python).
        pch_flags = kit.pch['flags'] if kit.pch else []
        self.assertEqual([word for word in commands['shape.cpp'] + commands['other.cpp'] +
                          pch_flags if 'TORCH_API_INCLUDE_EXTENSION_H' in word], [])
        self.assertEqual(commands['shape.cpp'][:1], [_torch_kit.compiler()[0]])
        # Its calls to the functions it defines were bound when it was linked
        # (-Wl,-Bsymbolic-functions): none is left for dlopen to look up.
        self.assertEqual(self_bound_functions(os.path.join(entry, 'libshapefcn.so')), [])


class LookupTest(unittest.TestCase):
    """The compiler on PATH and the torch kit: looked up once in a block of
    _torch_build.one_lookup() (a load(), which finds the shape library and
    the bridge), again in each new block and outside one."""

    def test_the_compiler_is_looked_up_once_per_block(self):
        from build_custom_op import _shape_library, _torch_build, _torch_kit
        calls = []
        real = _torch_kit.compiler

        def counted():
            calls.append(threading.get_ident())
            return real()

        def find():
            _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)

        counts = []
        with unittest.mock.patch.object(_torch_kit, 'compiler', counted):
            find()
            find()
            counts.append(len(calls))
            with _torch_build.one_lookup():
                find()
                with _torch_build.one_lookup():
                    find()
                # Another thread looks up for itself.
                other = threading.Thread(target=find)
                other.start()
                other.join()
                find()
            counts.append(len(calls))
            with _torch_build.one_lookup():
                find()
            counts.append(len(calls))
        self.assertEqual(counts, [2, 4, 5])
        self.assertEqual(len(set(calls[2:4])), 2)


class WaitTest(Work):
    """A wait for an entry that another process holds."""

    def hold(self, entry):
        """Holds the entry's lock as a build does; returns the descriptor."""
        descriptor = os.open(os.path.join(entry, '.lock'), os.O_RDWR | os.O_CREAT, 0o644)
        self.addCleanup(os.close, descriptor)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f'{os.getpid()}\nthe test of waits\n'.encode())
        return descriptor

    def test_a_wait_is_announced_with_the_holder(self):
        entry = self.private_copy()
        descriptor = self.hold(entry)
        process = subprocess.Popen([sys.executable, '-c', LOAD, fixture.OTHER_SHAPES[0]],
                                   env=self.environment(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: process.poll() is None and process.kill())
        # Read while the lock is held: the announcement comes before the load
        # ends (a load that waits in silence is stopped after a while).
        timer = threading.Timer(300, process.kill)
        timer.start()
        self.addCleanup(timer.cancel)
        line = process.stderr.readline()
        self.assertEqual(line, f'build_custom_op: waiting for the shape library in {entry}: '
                               f'process {os.getpid()} (the test of waits) holds its lock\n')
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        output, errors = process.communicate(timeout=600)
        self.assertEqual((output, errors), (os.path.join(entry, 'libshapefcn.so') + '\n', ''))

    def test_a_wait_ends_at_the_limit(self):
        entry = self.private_copy()
        self.hold(entry)
        done = self.python(LOAD, fixture.OTHER_SHAPES[0], '0.3', bound=300)
        self.assertEqual(done.stdout, f'gave up waiting for the shape library in {entry} after '
                         f'0.3 s (the timeout given to load()): process {os.getpid()} (the test '
                         'of waits) holds its lock; try again when it is done, or give a longer '
                         'timeout\n')

    def test_load_honours_its_timeout(self):
        entry = self.private_copy()
        self.hold(entry)
        done = self.python('import sys\n'
                           'from build_custom_op import custom_op\n'
                           'try:\n'
                           '    custom_op.load("other", [sys.argv[1]], [sys.argv[2]], '
                           'target="host", timeout=0.25)\n'
                           'except custom_op.CustomOpError as error:\n'
                           '    print(error.message)\n', self.kernels(), fixture.OTHER_SHAPES[0],
                           bound=300)
        self.assertEqual(done.stdout,
                         f"load('other'): step 1 of 6, building the shape library "
                         f'[{fixture.OTHER_SHAPES[0]}]: gave up waiting for the shape library '
                         f'in {entry} after 0.25 s (the timeout given to load()): process '
                         f'{os.getpid()} (the test of waits) holds its lock; try again when it '
                         'is done, or give a longer timeout\n', done.stderr)


class TrustTest(Work):
    """Who may have written an entry."""

    def refusal(self, entry, problem):
        return (f'the cache entry {entry} is not safe to load from: {problem}, so a library '
                'there could have been put there by someone else. Make it a directory of your '
                'own that no one else can write (chmod go-w, or remove it), or set '
                'BUILD_CUSTOM_OP_CACHE to such a directory')

    def plant(self, entry):
        """Replaces the entry's library with one whose constructor leaves a
        mark; the mark's path."""
        source = os.path.join(self.work, 'planted.c')
        with open(source, 'w') as stream:
            stream.write(PLANTED)
        library = os.path.join(entry, 'libshapefcn.so')
        os.unlink(library)
        subprocess.run(['cc', '-shared', '-fPIC', '-o', library, source], check=True)
        with open(os.path.join(entry, 'manifest.json'), 'w') as stream:
            json.dump({'library': 'libshapefcn.so', 'headers': []}, stream)
        return os.path.join(self.work, 'planted')

    def test_an_entry_others_can_write_is_refused(self):
        entry = self.private_copy()
        mark = self.plant(entry)
        for path in (entry, os.path.dirname(entry), self.cache):
            with self.subTest(path=path):
                os.chmod(path, 0o777)
                done = self.python(LOAD, fixture.OTHER_SHAPES[0], PLANTED_MARK=mark)
                self.assertEqual(done.stdout, self.refusal(
                    entry, f'others can write {path} (mode 777)') + '\n', done.stderr)
                self.assertFalse(os.path.exists(mark), 'the planted library was loaded')
                os.chmod(path, 0o755)

    def test_an_entry_of_another_user_is_refused(self):
        entry = self.private_copy()
        mark = self.plant(entry)
        if os.geteuid() == 0:
            os.chown(entry, 65534, -1)
            problem = f'{entry} belongs to another user (uid 65534)'
        else:   # the same check, by the group's write bit
            os.chmod(entry, 0o775)
            problem = f'others can write {entry} (mode 775)'
        done = self.python(LOAD, fixture.OTHER_SHAPES[0], PLANTED_MARK=mark)
        self.assertEqual(done.stdout, self.refusal(entry, problem) + '\n', done.stderr)
        self.assertFalse(os.path.exists(mark), 'the planted library was loaded')

    def test_a_symbolic_link_is_refused(self):
        entry = self.private_copy()
        moved = os.path.join(self.work, 'elsewhere')
        os.rename(entry, moved)
        os.symlink(moved, entry)
        done = self.python(LOAD, fixture.OTHER_SHAPES[0])
        self.assertEqual(done.stdout, self.refusal(
            entry, f'{entry} is a symbolic link (to {moved}), which another user could have '
            'made point elsewhere') + '\n', done.stderr)

    def test_a_library_others_can_write_is_built_again(self):
        entry = self.private_copy()
        mark = self.plant(entry)
        library = os.path.join(entry, 'libshapefcn.so')
        os.chmod(library, 0o777)
        done = self.python(LOAD, fixture.OTHER_SHAPES[0], PLANTED_MARK=mark)
        self.assertEqual(done.stdout, library + '\n', done.stderr)
        self.assertFalse(os.path.exists(mark), 'the planted library was loaded')
        self.assertEqual(stat.S_IMODE(os.stat(library).st_mode) & 0o022, 0)

    def test_the_compute_and_bridge_caches_are_checked_too(self):
        self.private_copy()
        for kind in ('compute', 'bridge'):
            os.makedirs(os.path.join(self.cache, kind), mode=0o777)
            os.chmod(os.path.join(self.cache, kind), 0o777)
        # Registering builds the bridge in the cache when no kit has it.
        done = self.python('from build_custom_op import _host_ops\n'
                           'try:\n'
                           '    _host_ops.bridge()\n'
                           'except _host_ops.RegistrationError as error:\n'
                           '    print(error)\n', BUILD_CUSTOM_OP_TORCH_KIT='none')
        self.assertRegex(done.stdout, r'^building the bridge of host ops: the cache entry '
                         + self.cache + r'/bridge/\w+ is not safe to load from: others can '
                         'write ' + self.cache + r'/bridge \(mode 777\), so a library')
        done = self.python('from build_custom_op import custom_op\n'
                           'try:\n'
                           f'    custom_op.load("other", [{self.kernels()!r}],'
                           f' [{fixture.OTHER_SHAPES[0]!r}], target="host")\n'
                           'except custom_op.CustomOpError as error:\n'
                           '    print(error.message)\n')
        self.assertRegex(done.stdout, r"^load\('other'\): step 4 of 6, building the compute "
                         r'library: the cache entry ' + self.cache + r'/compute/\w+ is not safe '
                         'to load from: others can write ' + self.cache + r'/compute \(mode 777\)')


if __name__ == '__main__':
    tap.main(needs_torch=True)
