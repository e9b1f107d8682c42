"""test_command.py - python3 -m build_custom_op against the build-custom-op
binary: the same arguments give the same stdout, stderr, exit status and
tool calls, since the module runs the program.  Also main(), the lookup of
the library and of the program, and make install-python."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
import build_custom_op  # noqa: E402
from test_compile import RELU, AXPY, wait_for_line  # noqa: E402

BINARY = os.path.join(tap.TOP, 'build-custom-op')
PYTHON_DIR = os.path.join(tap.TOP, 'python')
# A build stopped by a signal cleans up, then ends by that signal.
INTERRUPTED_STATUS = {signal.SIGINT: -signal.SIGINT, signal.SIGTERM: -signal.SIGTERM}


def module_command():
    return [sys.executable, '-m', 'build_custom_op']


def make_environment():
    """The environment for a make run by a test: without the jobserver of a
    make -j that runs the tests, whose descriptors the child does not get."""
    return {name: value for name, value in os.environ.items()
            if name not in ('MAKEFLAGS', 'MFLAGS', 'MAKELEVEL')}


def python_environment(**changes):
    environment = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    environment.update(changes)
    return environment



def version_in_the_header():
    """BCO_VERSION of include/buildcustomop.h, the version's one owner."""
    with open(os.path.join(tap.TOP, 'include', 'buildcustomop.h')) as stream:
        return re.search(r'^#define BCO_VERSION "([^"]+)"$', stream.read(), re.M).group(1)

class CommandTest(tap.FakeToolchainTest):

    def setUp(self):
        super().setUp()
        for face in ('binary', 'module'):
            os.makedirs(os.path.join(face, 'src'))
            for source in ('relu.cpp', 'axpy.cpp'):
                shutil.copy(os.path.join('src', source), os.path.join(face, 'src', source))

    def run_face(self, face, arguments, environment):
        directory = os.path.join(self.work, face)
        environment = dict(environment, FAKE_LOG=os.path.join(directory, 'log'))
        command = [BINARY] if face == 'binary' else module_command()
        done = subprocess.run(command + arguments, cwd=directory, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=python_environment(**environment))
        log = os.path.join(directory, 'log')
        calls = self.read(log).replace(directory, 'DIR') if os.path.exists(log) else ''
        return (done.returncode, done.stdout.decode(), done.stderr.decode(), calls)

    def same(self, arguments, status, **environment):
        """Runs both faces; they must agree, and exit with status."""
        environment = dict(os.environ, **environment)
        binary = self.run_face('binary', arguments, environment)
        module = self.run_face('module', arguments, environment)
        self.assertEqual(module, binary)
        self.assertEqual(binary[0], status, binary[2])
        return binary

    def test_a_build(self):
        out = self.same(['-j', '1', '--name', 'relu', '--op', RELU, '--op',
                         'axpy=' + AXPY, 'src/relu.cpp', 'src/axpy.cpp'], 0)[1]
        self.assertEqual(out, 'build/relu.packed.so\n')
        self.assertEqual(self.read('module/build/wrapper.cpp'),
                         self.read('binary/build/wrapper.cpp'))

    def test_a_multicore_build(self):
        self.same(['-j1', '--multicore', '-B', 'out', '--name', 'relu', '--op', RELU,
                   'src/relu.cpp'], 0)

    def test_flags_in_order(self):
        self.same(['-j1', '-I', 'inc', '-I', '-isystem/opt/x', '--cflag', '-O3', '-D',
                   'STACK_SIZE=8192', '--cflag=-g', '--name', 'relu', '--op', RELU,
                   'src/relu.cpp'], 0)

    def test_options_after_the_sources(self):
        self.same(['src/relu.cpp', '--name', 'relu', '-j1', '--op', RELU], 0)

    def test_verbose(self):
        self.same(['-v', '-j1', '--name', 'relu', '--op', RELU, 'src/relu.cpp'], 0)

    def test_dry_run(self):
        out = self.same(['-n', '--name', 'relu', '--op', RELU, 'src/relu.cpp'], 0)[1]
        self.assertEqual(len(out.splitlines()), 4)

    def test_keep_going(self):
        self.same(['-k', '-j1', '--name', 'relu', '--op', RELU, 'src/relu.cpp',
                   'src/axpy.cpp'], 1, FAKE_FAIL='relu.o')

    def test_a_launcher(self):
        self.same(['-j1', '--launcher', 'fake-launcher  -x', '--name', 'relu', '--op', RELU,
                   'src/relu.cpp'], 0)
        self.same(['-j1', '-B', 'b2', '--name', 'relu', '--op', RELU, 'src/relu.cpp'], 0,
                  CUSTOM_OP_LAUNCHER='fake-launcher')

    def test_a_failed_step(self):
        err = self.same(['-j1', '--name', 'lib', '--op', RELU, 'src/relu.cpp', 'src/axpy.cpp'],
                        1, FAKE_FAIL='axpy.o')[2]
        self.assertEqual(err.splitlines()[-1], 'build-custom-op: build stopped: a step failed')

    def test_an_undefined_kernel(self):
        self.same(['-j1', '--name', 'lib', '--op', RELU, 'src/relu.cpp'], 1,
                  FAKE_UNDEFINED='relu')

    def test_a_bad_schema(self):
        self.same(['--name', 'relu', '--op', 'my_ops::relu(Tensor[] x) -> Tensor',
                   'src/relu.cpp'], 1)

    def test_a_bad_function_name(self):
        self.same(['--emit-wrapper', '-', '--op', '1bad=' + RELU], 1)

    def test_a_missing_source(self):
        self.same(['--name', 'relu', '--op', RELU, 'src/nothere.cpp'], 1)

    def test_a_missing_tool(self):
        self.same(['--name', 'relu', '--op', RELU, 'src/relu.cpp'], 1, PATH='/usr/bin:/bin')

    def test_a_missing_sdk(self):
        self.same(['--sdk', '/nowhere', '--name', 'relu', '--op', RELU, 'src/relu.cpp'], 1)

    def test_the_wrapper(self):
        self.same(['--emit-wrapper', '-', '--op', RELU, '--op', 'axpy=' + AXPY], 0)
        self.same(['--emit-wrapper', 'w.cpp', '--op', RELU], 0)
        self.assertEqual(self.read('module/w.cpp'), self.read('binary/w.cpp'))
        self.same(['--target', 'host', '--emit-wrapper', '-', '--op', RELU], 0)

    def test_usage_errors(self):
        for arguments in (['--name', 'relu', 'src/relu.cpp'],
                          ['--op', RELU, 'src/relu.cpp'],
                          ['--name', 'relu', '--op', RELU],
                          ['--emit-wrapper', '-', '--op', RELU, 'src/relu.cpp'],
                          ['--foo', '--op', RELU],
                          ['--foo=bar', '--op', RELU],
                          ['--name=relu', '--multicore=yes', '--op', RELU],
                          ['-x', '--op', RELU],
                          ['--op', RELU, '--name'],
                          ['-j', 'x', '--op', RELU],
                          ['-j', '0', '--op', RELU],
                          ['--target', 'arm', '--op', RELU]):
            with self.subTest(arguments=arguments):
                self.same(arguments, 2)

    def test_the_version(self):
        self.same(['--version'], 0)

    def test_help(self):
        out = self.same(['--help'], 0)[1]
        self.assertEqual(out.splitlines()[0],
                         'Usage: build-custom-op [OPTIONS] --name NAME --op [FN=]SCHEMA... SOURCE...')

    def test_an_unknown_option_with_a_value_is_named_whole(self):
        err = self.same(['--foo=bar', '--op', RELU], 2)[2]
        self.assertEqual(err, "build-custom-op: unrecognized option '--foo=bar'\n"
                              "Try 'build-custom-op --help' for more information.\n")

    def test_closed_standard_descriptors_and_a_full_stdout(self):
        for closing in ('>&-', '2>&-', '<&-', '>/dev/full'):
            with self.subTest(closing=closing):
                ends = []
                for command in ([BINARY], module_command()):
                    done = subprocess.run(['sh', '-c', f'"$@" {closing}', 'sh'] + command +
                                          ['--emit-wrapper', '-', '--op', RELU],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=python_environment())
                    ends.append((done.returncode, done.stderr.decode()))
                self.assertEqual(ends[1], ends[0])
                self.assertEqual(ends[0], (1, 'build-custom-op: cannot write to stdout: '
                                              'No space left on device\n')
                                 if closing == '>/dev/full' else (0, ''))

    def interrupted(self, face, number):
        """Runs a build that hangs in a compile, sends it a signal, and
        returns (returncode, stdout, last line of stderr, relu.o left)."""
        directory = os.path.join(self.work, face)
        stamps = os.path.join(directory, 'stamps')
        shutil.rmtree(os.path.join(directory, 'build'), ignore_errors=True)
        if os.path.exists(stamps):
            os.remove(stamps)
        command = [BINARY] if face == 'binary' else module_command()
        child = subprocess.Popen(
            command + ['-j2', '--name', 'lib', '--op', RELU, 'src/relu.cpp', 'src/axpy.cpp'],
            cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=python_environment(FAKE_HANG='relu.o', FAKE_STAMPS=stamps))
        wait_for_line(stamps, 'hang relu.o')
        child.send_signal(number)
        out, err = child.communicate()
        return (child.returncode, out.decode(), err.decode().splitlines()[-1],
                os.path.exists(os.path.join(directory, 'build/relu.o')))

    def test_interrupts_end_it_as_they_end_the_command(self):
        for number in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(signal=number):
                binary = self.interrupted('binary', number)
                module = self.interrupted('module', number)
                self.assertEqual(module, binary)
                self.assertEqual(binary, (INTERRUPTED_STATUS[number], '',
                                          'build-custom-op: interrupted by '
                                          + signal.Signals(number).name, False))

    def test_main_returns_the_status(self):
        code = ('import sys, build_custom_op\n'
                'status = build_custom_op.main(sys.argv[1:])\n'
                'print("status", status)\n')
        done = subprocess.run([sys.executable, '-c', code, '--emit-wrapper', '-', '--op',
                               '1bad=' + RELU], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=python_environment())
        self.assertEqual((done.returncode, done.stdout.decode(), done.stderr.decode()), (
            0, 'status 1\n', "build-custom-op: op 1: function name '1bad' is not a C identifier "
                             "(letters, digits and '_', not starting with a digit)\n"))
        done = subprocess.run([sys.executable, '-c', code, '--version'], stdout=subprocess.PIPE,
                              env=python_environment())
        self.assertEqual(done.stdout.decode().splitlines()[-1], 'status 0')

    def test_main_passes_a_keyboard_interrupt_on_and_waits(self):
        stamps = os.path.join(self.work, 'stamps')
        os.environ.update(FAKE_HANG='relu.o', FAKE_STAMPS=stamps)

        def interrupt():
            wait_for_line(stamps, 'hang relu.o')
            os.kill(os.getpid(), signal.SIGINT)  # to this process only, not to the program

        thread = threading.Thread(target=interrupt)
        thread.start()
        saved_stderr = os.dup(2)  # the program's progress goes there
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        try:
            with self.assertRaises(KeyboardInterrupt):
                build_custom_op.main(['-j2', '--name', 'lib', '--op', RELU, 'src/relu.cpp',
                                      'src/axpy.cpp'])
        finally:
            os.dup2(saved_stderr, 2)
            os.close(saved_stderr)
            os.close(null)
            thread.join()
        # main() waited: the program had stopped the tool and deleted its output.
        self.assertFalse(os.path.exists('build/relu.o'))
        tool = int(wait_for_line(stamps, 'hang relu.o', limit=1).split()[2])
        with self.assertRaises(ProcessLookupError):
            os.kill(tool, 0)


    def test_the_module_becomes_the_program(self):
        # exec, not a child: the process python3 -m started is build-custom-op
        # itself, and it is the parent of the tools.
        stamps = os.path.join(self.work, 'stamps')
        child = subprocess.Popen(
            module_command() + ['-j1', '--name', 'lib', '--op', RELU, 'src/relu.cpp'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=python_environment(FAKE_HANG='relu.o', FAKE_STAMPS=stamps))
        try:
            tool = wait_for_line(stamps, 'hang relu.o').split()[2]
            with open(f'/proc/{tool}/stat') as stream:
                parent = int(stream.read().rsplit(')', 1)[1].split()[1])
            self.assertEqual((parent, os.path.realpath(f'/proc/{child.pid}/exe')),
                             (child.pid, os.path.realpath(BINARY)))
        finally:
            child.terminate()
            child.wait()


class LibraryLookupTest(unittest.TestCase):

    def setUp(self):
        self.work = os.path.realpath(tempfile.mkdtemp(prefix='bco-python-test.'))
        self.addCleanup(shutil.rmtree, self.work, True)

    def copy_module(self):
        directory = os.path.join(self.work, 'lib', 'python')
        shutil.copytree(os.path.join(PYTHON_DIR, 'build_custom_op'),
                        os.path.join(directory, 'build_custom_op'),
                        ignore=shutil.ignore_patterns('__pycache__'))
        return directory

    def test_a_missing_library_says_how_to_get_one(self):
        directory = self.copy_module()
        environment = dict(os.environ, PYTHONPATH=directory)
        environment.pop('BUILD_CUSTOM_OP_LIBRARY', None)
        code = ('import build_custom_op\n'
                'try:\n'
                '    build_custom_op.generate_wrapper(["a::b(Tensor x) -> Tensor"])\n'
                'except build_custom_op.BuildError as error:\n'
                '    print(error.kind); print(error)\n')
        done = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                              env=environment, cwd=self.work)
        self.assertEqual(done.stdout.decode(),
                         'tool\ncannot load libbuildcustomop.so '
                         f'({self.work}/lib/libbuildcustomop.so: not found; '
                         'BUILD_CUSTOM_OP_LIBRARY is not set). '
                         "Run 'make' in the build-custom-op source tree, or set "
                         'BUILD_CUSTOM_OP_LIBRARY to the path of libbuildcustomop.so.\n')

    def test_the_environment_variable_is_the_last_place(self):
        directory = self.copy_module()
        library = os.path.join(tap.TOP, 'libbuildcustomop.so')
        environment = dict(os.environ, PYTHONPATH=directory, BUILD_CUSTOM_OP_LIBRARY=library)
        code = 'import build_custom_op; print(build_custom_op.library_path())'
        done = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                              env=environment, cwd=self.work)
        self.assertEqual(done.stdout.decode(), library + '\n')
        # A library next to the module (as in the source tree) comes first.
        shutil.copy(library, os.path.join(self.work, 'lib', 'libbuildcustomop.so'))
        done = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                              env=environment, cwd=self.work)
        self.assertEqual(done.stdout.decode(), f'{self.work}/lib/libbuildcustomop.so\n')

    def test_a_missing_program_says_how_to_get_one(self):
        directory = self.copy_module()
        environment = dict(os.environ, PYTHONPATH=directory)
        environment.pop('BUILD_CUSTOM_OP_PROGRAM', None)
        done = subprocess.run([sys.executable, '-m', 'build_custom_op', '--version'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
                              cwd=self.work)
        self.assertEqual((done.returncode, done.stdout.decode(), done.stderr.decode()), (
            1, '', 'build-custom-op: cannot find build-custom-op '
                   f'({self.work}/lib/build-custom-op: not found; '
                   'BUILD_CUSTOM_OP_PROGRAM is not set). '
                   "Run 'make' in the build-custom-op source tree, or set "
                   'BUILD_CUSTOM_OP_PROGRAM to the path of build-custom-op.\n'))

    def test_the_program_from_the_environment(self):
        directory = self.copy_module()
        environment = dict(os.environ, PYTHONPATH=directory, BUILD_CUSTOM_OP_PROGRAM=BINARY)
        code = 'import build_custom_op; print(build_custom_op.program_path())'
        done = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                              env=environment, cwd=self.work)
        self.assertEqual(done.stdout.decode(), BINARY + '\n')
        done = subprocess.run([sys.executable, '-m', 'build_custom_op', '--version'],
                              stdout=subprocess.PIPE, env=environment, cwd=self.work)
        self.assertEqual((done.returncode, done.stdout.decode().split('\n')[0]),
                         (0, 'build-custom-op ' + version_in_the_header()))

    def test_make_install_python_records_the_prefix(self):
        prefix = os.path.join(self.work, 'prefix')
        done = subprocess.run(['make', '-s', '--no-print-directory', '-C', tap.TOP, 'install-python',
                               'PREFIX=' + prefix, 'DESTDIR='],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=make_environment())
        self.assertEqual((done.returncode, done.stdout.decode()), (0, ''))
        directory = os.path.join(prefix, 'lib', 'python3', 'dist-packages')
        self.assertEqual(os.listdir(directory), ['build_custom_op'])
        # As make install places the library and the program.
        shutil.copy(os.path.join(tap.TOP, 'libbuildcustomop.so'),
                    os.path.join(prefix, 'lib', 'libbuildcustomop.so.0'))
        os.mkdir(os.path.join(prefix, 'bin'))
        shutil.copy(BINARY, os.path.join(prefix, 'bin', 'build-custom-op'))
        # Where a source tree's root would be for the package's copy in the
        # source tree: an installed copy does not look there.
        shutil.copy(os.path.join(tap.TOP, 'libbuildcustomop.so'),
                    os.path.join(prefix, 'lib', 'python3', 'libbuildcustomop.so'))
        shutil.copy(BINARY, os.path.join(prefix, 'lib', 'python3', 'build-custom-op'))
        environment = dict(os.environ, PYTHONPATH=directory)
        environment.pop('BUILD_CUSTOM_OP_LIBRARY', None)
        environment.pop('BUILD_CUSTOM_OP_PROGRAM', None)
        code = ('import build_custom_op\n'
                'print(build_custom_op.library_path()); print(build_custom_op.program_path())')
        done = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE,
                              env=environment, cwd=self.work)
        self.assertEqual(done.stdout.decode(), f'{prefix}/lib/libbuildcustomop.so.0\n'
                                               f'{prefix}/bin/build-custom-op\n')
        done = subprocess.run([sys.executable, '-m', 'build_custom_op', '--emit-wrapper', '-',
                               '--op', RELU], stdout=subprocess.PIPE, env=environment,
                              cwd=self.work)
        self.assertEqual(done.returncode, 0)
        self.assertTrue(done.stdout.decode().startswith('// WARNING: AUTO GENERATED DO NOT EDIT\n'))

    def test_install_honours_destdir_and_pythondir(self):
        destination = os.path.join(self.work, 'stage')
        done = subprocess.run(['make', '-s', '--no-print-directory', '-C', tap.TOP, 'install-python', 'PREFIX=/usr',
                               'DESTDIR=' + destination, 'PYTHONDIR=/opt/py'],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=make_environment())
        self.assertEqual((done.returncode, done.stdout.decode()), (0, ''))
        with open(os.path.join(destination, 'opt/py/build_custom_op/_installation.py')) as stream:
            lines = [line for line in stream if line[:1].isupper()]
        # Relative to /opt/py/build_custom_op, where the package is.
        self.assertEqual(lines, ["BINDIR = '../../../usr/bin'\n", "LIBDIR = '../../../usr/lib'\n",
                                 "INCLUDEDIR = '../../../usr/include'\n",
                                 "DATADIR = '../../../usr/share'\n",
                                 "PKGLIBDIR = '../../../usr/lib/build-custom-op'\n"])
        with open(os.path.join(destination, 'opt/py/build_custom_op/_library.py')) as stream:
            with open(os.path.join(tap.TOP, 'python/build_custom_op/_library.py')) as original:
                self.assertEqual(stream.read(), original.read())

    def test_pkg_config_files_name_the_prefix_of_each_install(self):
        # One tree installed to two prefixes: each pkg-config file names its
        # own (a copy kept from the first install would name the first).
        found = {}
        for name in ('first', 'second'):
            stage = os.path.join(self.work, name)
            done = subprocess.run(['make', '-s', '--no-print-directory', '-C', tap.TOP, 'install',
                                   'install-run-custom-op', 'TORCH_KIT=no', 'PREFIX=/opt/' + name,
                                   'DESTDIR=' + stage],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  env=make_environment())
            self.assertEqual((done.returncode, done.stdout.decode()), (0, ''))
            for library in ('buildcustomop', 'runcustomop'):
                with open(os.path.join(stage, 'opt', name, 'lib', 'pkgconfig',
                                       library + '.pc')) as stream:
                    found[name, library] = stream.read().splitlines()[:3]
        for name in ('first', 'second'):
            for library in ('buildcustomop', 'runcustomop'):
                self.assertEqual(found[name, library],
                                 [f'prefix=/opt/{name}', f'libdir=/opt/{name}/lib',
                                  f'includedir=/opt/{name}/include'])


if __name__ == '__main__':
    tap.main()
