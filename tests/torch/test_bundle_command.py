"""test_bundle_command.py - build-custom-op bundle: the shape-library flow
from the command line (it runs build_custom_op.bundle_command under an
interpreter that can import PyTorch)."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

PROGRAM = tap.program('build-custom-op')
TRY = "Try 'build-custom-op bundle --help' for more information.\n"
FIXTURE_ARGUMENTS = ['--name', 'fixture', '--shape', fixture.SHAPES[0], '--shape',
                     fixture.SHAPES[1], '-I', fixture.INCLUDES[0], '-D', 'FIXTURE_FLAG=1']


class BundleCommandTest(tap.FakeToolchainTest):
    def setUp(self):
        super().setUp()
        os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(self.work, 'bundles')

    def command(self, *argv, **environment):
        done = subprocess.run([PROGRAM, 'bundle', *argv], capture_output=True, text=True,
                              env=dict(os.environ, **environment))
        return done.returncode, done.stdout, done.stderr

    def test_help(self):
        from build_custom_op import bundle_command
        self.assertEqual(self.command('--help'), (0, bundle_command.USAGE, ''))
        self.assertTrue(bundle_command.USAGE.startswith(
            'Usage: build-custom-op bundle [OPTIONS] --name NAME --shape FILE... SOURCE...\n'))
        with open('/dev/full', 'w') as full:
            done = subprocess.run([PROGRAM, 'bundle', '--help'], stdout=full,
                                  stderr=subprocess.PIPE, text=True)
        self.assertEqual((done.returncode, done.stderr),
                         (1, 'build-custom-op: cannot write to stdout: No space left on device\n'))

    def test_usage_errors(self):
        cases = [
            ((), 'no library name: give --name NAME'),
            (('--name', 'x'), 'no shape source: give --shape FILE, the C++ file that '
                              'registers the ops with NEURON_LIBRARY'),
            (('--name', 'x', '--shape', 's.cpp'), "no SOURCE: give the kernels' C++ files"),
            (('--nme', 'x'), "unrecognized option '--nme'"),
            (('--name',), "option '--name' needs an argument"),
            (('--target', 'arm', '--name', 'x'), "unknown target 'arm': use xtensa or host"),
        ]
        for argv, message in cases:
            with self.subTest(argv=argv):
                self.assertEqual(self.command(*argv), (2, '', f'build-custom-op: {message}\n{TRY}'))

    def test_a_host_bundle(self):
        # Built with the PyTorch that loads it below (the command's default
        # interpreter is /usr/bin/python3's).
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '--target', 'host', '-B',
                                              'out', os.path.join(fixture.FIXTURES, 'ops.cpp'),
                                              BUILD_CUSTOM_OP_PYTHON=sys.executable)
        self.assertEqual((status, stdout, stderr), (0, 'out/libfixture.so\n', ''))
        # The bundle runs in a process of its own.
        script = ('import torch\n'
                  'from build_custom_op import custom_op\n'
                  "custom_op.load_library('out/libfixture.so', target='host')\n"
                  'print(torch.ops.test_ops.twice(torch.tensor([1.5, -2.0])).tolist())\n')
        done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=tap.PACKAGE_DIRECTORY))
        self.assertEqual((done.returncode, done.stdout), (0, '[3.0, -4.0]\n'), done.stderr)

    def test_a_device_bundle_runs_the_compute_build_of_load(self):
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '--multicore',
                                              'src/relu.cpp')
        self.assertEqual((status, stdout, stderr), (0, 'build/libfixture.so\n', ''))
        from build_custom_op import _archive
        with open('build/libfixture.so', 'rb') as stream:
            members = _archive.read(stream.read())
        self.assertEqual(len(members), 10)
        metadata = json.loads(dict(members)['metadata.json'])
        self.assertEqual(metadata['computelibs']['names'],
                         [f'libfixturecustomop_cpu{i}.packed.so' for i in range(8)])
        self.assertEqual(sum(' -DFIXTURE_FLAG=1 ' in line for line in self.logged()), 2)
        self.assertEqual(sorted(os.listdir('build')), ['libfixture.so', 'libfixturecustomop.build'])

    def test_verbose_progress_goes_to_stderr(self):
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '-v', '-B', 'out',
                                              'src/relu.cpp')
        self.assertEqual((status, stdout), (0, 'out/libfixture.so\n'), stderr)
        self.assertIn('schemas for test_ops::scale: test_ops::scale(Tensor _0, number _1, '
                      'float _2, int _3) -> (Tensor _0)\n', stderr)
        self.assertIn('xt-clang++ ', stderr)

    def test_a_failed_step(self):
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, 'src/relu.cpp',
                                              FAKE_UNDEFINED='twice')
        where = f'{fixture.SHAPES[1]}:{fixture.line_of(fixture.SHAPES[1], "twice")}'
        self.assertEqual((status, stdout, stderr), (
            1, '',
            'build-custom-op: bundle: step 4 of 6, building the compute library '
            f'[src/relu.cpp]: op test_ops::twice (registered at {where}) runs the compute '
            'function twice, but no compute source defines it (the link reports an undefined '
            'reference).\n'
            '  It must be defined in one of the compute sources (src/relu.cpp) as:\n'
            '    at::Tensor twice(const at::Tensor&)\n'))
        self.assertEqual(os.listdir('build'), ['libfixturecustomop.build'])

    def test_code_in_the_current_directory_is_not_imported(self):
        self.write('torch.py', "raise SystemExit('the torch.py of the current directory')\n")
        os.mkdir('build_custom_op')
        self.write('build_custom_op/__init__.py',
                   "raise SystemExit('the build_custom_op of the current directory')\n")
        from build_custom_op import bundle_command
        self.assertEqual(self.command('--help'), (0, bundle_command.USAGE, ''))
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '-B', 'out', 'src/relu.cpp')
        self.assertEqual((status, stdout, stderr), (0, 'out/libfixture.so\n', ''))

    def test_a_build_directory_that_is_a_file(self):
        self.write('out', 'a file\n')
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '-B', 'out', 'src/relu.cpp')
        self.assertEqual((status, stdout, stderr),
                         (1, '', 'build-custom-op: bundle: the build_directory out is not a '
                                 'directory\n'))
        self.assertFalse(os.path.exists(self.log), 'refused before anything was built')

    def test_a_bundle_that_is_a_source_through_a_link(self):
        os.mkdir('out')
        os.symlink('../src/relu.cpp', 'out/libfixture.so')
        with open('src/relu.cpp', 'rb') as stream:
            source = stream.read()
        status, stdout, stderr = self.command(*FIXTURE_ARGUMENTS, '-B', 'out', 'src/relu.cpp')
        self.assertEqual((status, stdout, stderr),
                         (1, '', 'build-custom-op: bundle: the bundle out/libfixture.so is the '
                                 'compute source src/relu.cpp (by another name): writing it '
                                 'would replace the source; write the bundle elsewhere\n'))
        with open('src/relu.cpp', 'rb') as stream:
            self.assertEqual(stream.read(), source, 'the source is left as it was')
        self.assertFalse(os.path.exists(self.log), 'refused before anything was built')

    def test_a_python_that_cannot_be_run(self):
        self.assertEqual(self.command('--help', BUILD_CUSTOM_OP_PYTHON='/nonexistent/python3'), (
            1, '', 'build-custom-op: bundle runs Python with PyTorch, and /nonexistent/python3 '
            'cannot be run: No such file or directory; install python3 and python3-torch, or '
            'set BUILD_CUSTOM_OP_PYTHON\n'))


if __name__ == '__main__':
    tap.main(needs_torch=True)
