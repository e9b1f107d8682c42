"""test_shape_library.py - the shape library's build under load(): the
cache is keyed by content, not by the library's name, and a hit imports
nothing of cpp_extension; an entry whose library is cut short or whose
headers changed is built again; an interrupted build stops the compilers it
started, so none goes on writing into the cache directory after its lock
is released."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

# A compiler that, asked to compile, writes its pid and waits; anything else
# (the version checks of cpp_extension) goes to the real one.
FAKE_COMPILER = """#!/bin/sh
for argument in "$@"; do
	if [ "$argument" = -c ]; then
		echo $$ >"$FAKE_WORK/compiler.pid"
		exec sleep 120
	fi
done
exec "$REAL_CXX" "$@"
"""

# Interrupts itself (as `kill -INT` of the Python process alone would) once
# the compile has started.
INTERRUPTED_LOAD = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from build_custom_op import _shape_library
pid_file = os.path.join(os.environ['FAKE_WORK'], 'compiler.pid')
def interrupt():
    while not os.path.exists(pid_file) or not open(pid_file).read().strip():
        time.sleep(0.02)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
try:
    _shape_library.build_and_load('interrupted', [sys.argv[1]], [], [], False)
    print('built')
except KeyboardInterrupt:
    print('interrupted')
"""


def setUpModule():
    from build_custom_op import _shape_library
    # Built once per machine (the suite's other tests share them).
    _shape_library.build_and_load('fixture', fixture.SHAPES, fixture.FLAGS, fixture.INCLUDES,
                                  False)
    _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)


# Loads a shape library in a fresh process; prints its path, whether
# cpp_extension was imported and whether the entry was built (its manifest
# written again).
LOAD = """
import os, sys
from build_custom_op import _shape_library
def manifest(directory):
    try:
        info = os.stat(os.path.join(directory, 'manifest.json'))
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns
entry = os.environ.get('ENTRY')
before = manifest(entry) if entry else None
path, data = _shape_library.build_and_load(sys.argv[1], [sys.argv[2]], [], [], False)
print(path)
print('torch.utils.cpp_extension' in sys.modules)
print(manifest(os.path.dirname(path)) != before if entry else 'unknown')
"""


class CacheTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-cache-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def load(self, name, source, **environment):
        """(path, whether cpp_extension was imported) of a load in a fresh
        process; with ENTRY=directory in environment, also whether that
        entry was built."""
        done = subprocess.run([sys.executable, '-c', LOAD, name, source],
                              env=dict(os.environ, PYTHONPATH=tap.PACKAGE_DIRECTORY,
                                       **environment),
                              capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr)
        path, imported, built = done.stdout.split()
        if 'ENTRY' in environment:
            return path, imported == 'True', built == 'True'
        return path, imported == 'True'

    def private_copy(self):
        """A cache of its own holding a copy of the entry of the other shape
        library (its objects, library and manifest), and that entry."""
        from build_custom_op import _shape_library
        path, _ = _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)
        entry = os.path.dirname(path)
        relative = os.path.relpath(entry, _shape_library.cache_root())
        copy = os.path.join(self.work, 'cache', relative)
        shutil.copytree(entry, copy)
        return os.path.join(self.work, 'cache'), copy

    def test_a_library_of_another_name_shares_the_entry(self):
        from build_custom_op import _shape_library
        expected, _ = _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)
        for name in ('other', 'renamed'):
            with self.subTest(name=name):
                self.assertEqual(self.load(name, fixture.OTHER_SHAPES[0]), (expected, False))

    def test_a_library_cut_short_is_built_again(self):
        cache, entry = self.private_copy()
        library = os.path.join(entry, 'libshapefcn.so')
        with open(library, 'rb') as stream:
            whole = stream.read()
        with open(library, 'r+b') as stream:
            stream.truncate(len(whole) // 2)
        path, _, built = self.load('other', fixture.OTHER_SHAPES[0], BUILD_CUSTOM_OP_CACHE=cache,
                                   ENTRY=entry)
        self.assertEqual((path, built), (library, True))
        from build_custom_op import _elf
        with open(library, 'rb') as stream:
            self.assertIsNone(_elf.incomplete(stream.read()))

    def test_a_changed_header_is_noticed(self):
        cache, entry = self.private_copy()
        manifest = os.path.join(entry, 'manifest.json')
        with open(manifest) as stream:
            recorded = json.load(stream)
        headers = [header for header, _ in recorded['headers']]
        from build_custom_op import _shape_library
        self.assertIn(os.path.join(_shape_library.include_directory(), 'torchneuron',
                                   'register.h'), headers)
        changed = dict(recorded, headers=[[header, '0' * 64] for header in headers])
        with open(manifest, 'w') as stream:
            json.dump(changed, stream)
        # The entry is built again (with ninja, which finds nothing to do:
        # the header is as it was; or with the torch kit), and its record
        # written again.
        path, _, built = self.load('other', fixture.OTHER_SHAPES[0], BUILD_CUSTOM_OP_CACHE=cache,
                                   ENTRY=entry)
        self.assertTrue(built)
        with open(manifest) as stream:
            self.assertEqual(json.load(stream), recorded)
        self.assertEqual(self.load('other', fixture.OTHER_SHAPES[0],
                                   BUILD_CUSTOM_OP_CACHE=cache, ENTRY=entry),
                         (path, False, False))

    def test_files_changed_since_they_were_read_are_read_again(self):
        """An entry's headers, its library and the sources of its key are
        known by their fingerprints once they have settled, and read again
        when they change in any way, their size and mtime put back."""
        from build_custom_op import _torch_build, _torch_kit
        cache, entry = self.private_copy()
        environment = dict(os.environ)

        def restore():
            os.environ.clear()
            os.environ.update(environment)

        self.addCleanup(restore)
        os.environ[_torch_build.CACHE_VARIABLE] = cache
        read = fixture.files_read_again(self)
        header = os.path.join(self.work, 'included.h')
        source = os.path.join(self.work, 'shape.cpp')
        for path in (header, source):
            with open(path, 'w') as stream:
                stream.write('// version 1\n')
        manifest = os.path.join(entry, 'manifest.json')
        with open(manifest) as stream:
            recorded = json.load(stream)
        recorded['headers'].append([header, hashlib.sha256(b'// version 1\n').hexdigest()])
        with open(manifest, 'w') as stream:
            json.dump(recorded, stream)
        library = os.path.join(entry, 'libshapefcn.so')

        def looked_up():
            time.sleep(0.05)   # past the tick of the last change
            del read[:]
            return _torch_build._cached(entry), _torch_build._key(
                'shape-libraries', _torch_kit.SHAPE_LIBRARY_NAME, [source], [], [])

        def changed(path, offset, value):
            info = os.stat(path)
            with open(path, 'r+b') as stream:
                stream.seek(offset)
                stream.write(value)
            os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
            after = os.stat(path)
            self.assertEqual((after.st_size, after.st_mtime_ns), (info.st_size, info.st_mtime_ns))

        with open(library, 'rb') as stream:
            digest = hashlib.sha256(stream.read()).hexdigest()
        first, key = looked_up()
        self.assertEqual(first, (library, digest))
        self.assertEqual(looked_up(), (first, key))
        self.assertEqual(read, [])
        with self.subTest(changed='a source of the key'):
            changed(source, 11, b'2')
            self.assertNotEqual(looked_up(), (first, key))
            self.assertEqual(read, [source])
        with self.subTest(changed='the library'):
            with open(library, 'rb') as stream:
                stream.seek(-3, os.SEEK_END)
                byte = stream.read(1)[0]
            changed(library, os.stat(library).st_size - 3, bytes([byte ^ 0x01]))
            with open(library, 'rb') as stream:
                now = hashlib.sha256(stream.read()).hexdigest()
            self.assertNotEqual(now, digest)
            self.assertEqual(looked_up()[0], (library, now))
        with self.subTest(changed='a header'):
            changed(header, 11, b'2')
            self.assertIsNone(looked_up()[0])

    def test_an_unusable_cache_is_named(self):
        from build_custom_op import _shape_library
        cache, entry = self.private_copy()
        os.remove(os.path.join(entry, 'manifest.json'))   # to be built again
        os.remove(os.path.join(entry, '.lock'))
        os.mkdir(os.path.join(entry, '.lock'))
        os.environ['BUILD_CUSTOM_OP_CACHE'] = cache
        self.addCleanup(os.environ.pop, 'BUILD_CUSTOM_OP_CACHE')
        with self.assertRaises(_shape_library.ShapeLibraryError) as caught:
            _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)
        self.assertEqual(str(caught.exception), 'cannot open the cache lock '
                         f'{entry}/.lock: Is a directory; set BUILD_CUSTOM_OP_CACHE to a '
                         'writable directory')
        os.environ['BUILD_CUSTOM_OP_CACHE'] = '/dev/null/cache'
        with self.assertRaises(_shape_library.ShapeLibraryError) as caught:
            _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)
        self.assertRegex(str(caught.exception), r'^cannot create the cache directory '
                         r'/dev/null/cache/shape-libraries/\w+: Not a directory; set '
                         r'BUILD_CUSTOM_OP_CACHE to a writable directory$')


# load() of the fixture in a Python that cannot import setuptools (a
# virtual environment of Python 3.12 has none), with an empty cache.
WITHOUT_SETUPTOOLS = """
import sys
sys.modules['setuptools'] = None   # import setuptools: ModuleNotFoundError
sys.path.insert(0, sys.argv[1])
import fixture
from build_custom_op import custom_op
try:
    fixture.load([fixture.FIXTURES + '/ops.cpp'], sys.argv[2], target='host')
except custom_op.CustomOpError as error:
    print(error.step)
    print(error.message)
"""


class NoSetuptoolsTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-setuptools-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def test_a_python_without_setuptools(self):
        done = subprocess.run([sys.executable, '-c', WITHOUT_SETUPTOOLS, fixture.HERE,
                               os.path.join(self.work, 'out')],
                              # A torch kit compiles without cpp_extension: none here.
                              env=dict(os.environ, BUILD_CUSTOM_OP_TORCH_KIT='none',
                                       BUILD_CUSTOM_OP_CACHE=os.path.join(self.work, 'cache')),
                              capture_output=True, text=True, timeout=300)
        shapes = ', '.join(fixture.SHAPES)
        self.assertEqual(done.stdout, (
            'building the shape library\n'
            f"load('fixture'): step 1 of 6, building the shape library [{shapes}]: "
            'torch.utils.cpp_extension, which compiles against PyTorch, needs setuptools, '
            f'which {sys.executable} cannot import: install it ({sys.executable} -m pip '
            'install setuptools)\n'), done.stderr)


class InterruptedBuildTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-shape-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def test_an_interrupted_build_stops_its_compiler(self):
        real = shutil.which('c++')
        if real is None:
            self.skipTest('no C++ compiler: apt-get install g++')
        tools = os.path.join(self.work, 'bin')
        os.mkdir(tools)
        with open(os.path.join(tools, 'c++'), 'w') as stream:
            stream.write(FAKE_COMPILER)
        os.chmod(os.path.join(tools, 'c++'), 0o755)
        environment = dict(os.environ, FAKE_WORK=self.work, REAL_CXX=real,
                           PATH=tools + os.pathsep + os.environ.get('PATH', ''),
                           BUILD_CUSTOM_OP_CACHE=os.path.join(self.work, 'cache'),
                           PYTHONPATH=tap.PACKAGE_DIRECTORY)
        environment.pop('CXX', None)
        done = subprocess.run([sys.executable, '-c', INTERRUPTED_LOAD, fixture.OTHER_SHAPES[0]],
                              env=environment, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.stdout, 'interrupted\n', done.stderr)
        with open(os.path.join(self.work, 'compiler.pid')) as stream:
            pid = int(stream.read())
        self.addCleanup(lambda: fixture.running(pid) and os.kill(pid, signal.SIGKILL))
        # ninja waits for what it stopped before it exits; allow for a slow machine.
        for _ in range(100):
            if not fixture.running(pid):
                break
            time.sleep(0.05)
        self.assertFalse(fixture.running(pid), 'the compiler outlived the interrupted load()')


class NoStandardStreamsTest(unittest.TestCase):
    """Python sets sys.stdout and sys.stderr to None when they are closed:
    the build runs on, and what it would print is dropped."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-shape-streams.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def test_ninja_runs_with_no_standard_streams(self):
        import contextlib
        from build_custom_op import _torch_build
        with open(os.path.join(self.work, 'build.ninja'), 'w') as stream:
            stream.write('rule touch\n  command = touch $out\nbuild made: touch\n')

        class Extension:
            @staticmethod
            def _get_num_workers(verbose):
                return None

        for verbose in (False, True):
            with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
                _torch_build._run_ninja(Extension, self.work, verbose, 'error')
            self.assertTrue(os.path.exists(os.path.join(self.work, 'made')))
            os.unlink(os.path.join(self.work, 'made'))


if __name__ == '__main__':
    tap.main(needs_torch=True)
