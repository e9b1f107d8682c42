"""test_mlp.py - examples/mlp, as make demo-torch runs it: for each kernel
variant, build.py builds the relu ops for the host target and train.py
trains the MLP with them and with torch.relu and checks that every
parameter is equal, bit for bit; and compile.py, on PyTorch 2.x, does the
same with the model compiled by torch.compile, then exports it."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

STEPS = 3


class MlpTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-mlp-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.environment = dict(os.environ, BUILD_CUSTOM_OP_BUNDLES=os.path.join(self.work,
                                                                                'bundles'))

    def run_example(self, *argv):
        done = subprocess.run([sys.executable, *argv], cwd=fixture.MLP, env=self.environment,
                              capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr

    def check_losses(self, stdout, what):
        """The STEPS lines of equal losses stdout starts with, of two more
        lines, which are returned."""
        lines = stdout.splitlines()
        self.assertEqual(len(lines), STEPS + 2, stdout)
        for step, line in enumerate(lines[:STEPS], 1):
            match = re.fullmatch(rf'step {step}: loss (\S+) {what}, (\S+) with torch\.relu',
                                 line)
            self.assertIsNotNone(match, line)
            self.assertEqual(match.group(1), match.group(2))
        return lines[STEPS:]

    def check_variant(self, variant):
        out = os.path.join(self.work, variant)
        status, stdout, stderr = self.run_example('build.py', variant, out)
        self.assertEqual((status, stdout), (0, os.path.join(out, 'librelu.so') + '\n'), stderr)
        status, stdout, stderr = self.run_example('train.py', os.path.join(out, 'librelu.so'),
                                                  '--steps', str(STEPS))
        self.assertEqual(status, 0, stdout + stderr)
        lines = self.check_losses(stdout, 'with the custom relu')
        self.assertRegex(lines[0], rf'^{STEPS} steps: \S+ steps/s with the custom relu, '
                                   r'\S+ steps/s with torch\.relu$')
        self.assertEqual(lines[1], "every parameter (6 tensors, 105214 values) equals "
                                   "torch.relu's, bit for bit")

    def test_element_accessor(self):
        self.check_variant('element')

    def test_tcm_accessor(self):
        self.check_variant('tcm')

    def test_multicore_with_get_dst_tensor(self):
        self.check_variant('multicore')

    def test_compiled_and_exported(self):
        import torch
        out = os.path.join(self.work, 'element')
        status, stdout, stderr = self.run_example('build.py', 'element', out)
        self.assertEqual(status, 0, stderr)
        bundle = os.path.join(out, 'librelu.so')
        if not hasattr(torch.library, 'register_autograd'):
            status, stdout, stderr = self.run_example('compile.py', bundle)
            self.assertEqual((status, stdout, stderr), (2, '', (
                f'compile.py needs PyTorch 2.4 or later (this is {torch.__version__}); on '
                'PyTorch 1.x, train.py calls the ops in a torch.autograd.Function\n')))
            return
        for options in ([], ['--dynamic']):
            with self.subTest(options=options):
                status, stdout, stderr = self.run_example('compile.py', bundle, '--steps',
                                                          str(STEPS), *options)
                self.assertEqual(status, 0, stdout + stderr)
                self.assertEqual(self.check_losses(stdout, 'compiled with the custom relu'), [
                    "compiled: every parameter equals torch.relu's, bit for bit",
                    'exported: the program calls my_ops::relu_forward and computes what the '
                    'model does'])

    def test_a_wrong_relu_is_caught(self):
        # The check can fail: a relu that cuts at 0.01 leaves other weights.
        broken = os.path.join(self.work, 'broken')
        os.makedirs(broken)
        with open(os.path.join(fixture.MLP, 'tcm', 'relu.cpp')) as stream:
            text = stream.read()
        text = text.replace('buffer[j] > 0.0f ? buffer[j]', 'buffer[j] > 0.01f ? buffer[j]')
        with open(os.path.join(broken, 'relu.cpp'), 'w') as stream:
            stream.write(text)
        script = ('import build\n'
                  'from build_custom_op import custom_op\n'
                  f"custom_op.load('relu', [{os.path.join(broken, 'relu.cpp')!r}], "
                  f"['shape.cpp'], build_directory={broken!r}, target='host')\n")
        status, stdout, stderr = self.run_example('-c', script)
        self.assertEqual(status, 0, stderr)
        status, stdout, stderr = self.run_example('train.py',
                                                  os.path.join(broken, 'librelu.so'),
                                                  '--steps', '1')
        self.assertEqual(status, 1, stderr)
        self.assertEqual(stdout.splitlines()[-1], "FAILED: these parameters differ from "
                         "torch.relu's: fc1.weight, fc1.bias, fc2.weight, fc2.bias, fc3.weight, "
                         "fc3.bias")


if __name__ == '__main__':
    tap.main(needs_torch=True)
