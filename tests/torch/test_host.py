"""test_host.py - custom ops on the host target: torch.ops.<ns>.<op> runs
the kernel on the emulated GPSIMD cores (through build_custom_op.runner),
with the output allocated from the shape function, the device's limits,
faults raised as exceptions, and bundles loaded in a fresh process."""

import json
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

state = {}


def setUpModule():
    from build_custom_op import custom_op
    work = state['work'] = tempfile.mkdtemp(prefix='bco-host-test.')
    state['environment'] = dict(os.environ)
    os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(work, 'bundles')
    fixture.load([os.path.join(fixture.FIXTURES, 'ops.cpp')],
                 os.path.join(work, 'fixture'), target='host')
    custom_op.load('relu', [os.path.join(fixture.FIXTURES, 'relu_faults.cpp')],
                   [os.path.join(fixture.MLP, 'shape.cpp')], build_directory=os.path.join(
                       work, 'faults'), multicore=True, target='host')


def tearDownModule():
    shutil.rmtree(state['work'], ignore_errors=True)
    os.environ.clear()
    os.environ.update(state['environment'])


def source_of(path, text):
    return f'{path}:{fixture.line_of(path, text)}'


class HostTest(unittest.TestCase):
    def setUp(self):
        import torch
        from build_custom_op import runner
        self.torch = torch
        self.runner = runner

    def assertSameBits(self, actual, expected):
        self.assertEqual(actual.dtype, expected.dtype)
        self.assertEqual(tuple(actual.shape), tuple(expected.shape))
        self.assertTrue(self.torch.equal(actual, expected), f'{actual} != {expected}')

    def scale_expected(self, x, a, b, n):
        torch = self.torch
        factor = torch.tensor(a, dtype=torch.float32) * torch.tensor(b, dtype=torch.float32)
        return x * factor + torch.tensor(float(n), dtype=torch.float32)

    def test_ops_of_every_argument_kind(self):
        torch = self.torch
        x = torch.tensor([1.5, -2.0, 0.25, 3.0, -0.75])
        for a, b, n in ((2, 0.5, 3), (1.5, -4.0, -7), (-3, 0.1, 0)):
            with self.subTest(a=a, b=b, n=n):
                self.assertSameBits(torch.ops.test_ops.scale(x, a, b, n),
                                    self.scale_expected(x, a, b, n))
        self.assertSameBits(torch.ops.test_ops.twice(x), x * 2)
        self.assertSameBits(torch.ops.test_more.negate(x), x * -1)
        self.assertSameBits(getattr(torch.ops.test_more, fixture.LONG_OP)(x), x * 3)

    def test_an_output_shape_from_the_shape_function(self):
        torch = self.torch
        x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -0.5, 8.0, 0.0], [-1.0, -2.0, -3.0, 6.0]])
        self.assertSameBits(torch.ops.test_ops.row_sums(x), torch.tensor([10.0, 8.0, 0.0]))
        # A view with strides of its own is passed as the values it shows.
        self.assertSameBits(torch.ops.test_ops.row_sums(x.t()),
                            torch.tensor([0.5, -0.5, 8.0, 10.0]))

    def test_a_multicore_op(self):
        torch = self.torch
        # 7 * 1429 = 10003 elements: the cores' shares are uneven.
        x = torch.linspace(-5.0, 5.0, 10003).reshape(7, 1429)
        self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        grad = torch.linspace(1.0, 2.0, 10003).reshape(7, 1429)
        self.assertSameBits(torch.ops.my_ops.relu_backward(grad, x),
                            torch.where(x > 0, grad, torch.zeros_like(grad)))

    def test_inside_an_autograd_function(self):
        torch = self.torch
        sys.path.insert(0, fixture.MLP)
        from my_ops import Relu   # examples/mlp's Function over the two ops
        x = torch.linspace(-3.0, 3.0, 24).reshape(4, 6).requires_grad_()
        y = torch.linspace(-3.0, 3.0, 24).reshape(4, 6).requires_grad_()
        (Relu.apply(x) * torch.arange(24.0).reshape(4, 6)).sum().backward()
        (torch.relu(y) * torch.arange(24.0).reshape(4, 6)).sum().backward()
        self.assertSameBits(x.grad, y.grad)

    def expect_fault(self, call, core, op, pattern):
        with self.assertRaises(self.runner.RunError) as caught:
            call()
        self.assertEqual(caught.exception.core, core)
        self.assertEqual(caught.exception.op, op)
        self.assertRegex(caught.exception.message, pattern)
        self.assertEqual(str(caught.exception), caught.exception.message)

    def test_a_kernel_violation_names_the_core_and_the_next_call_works(self):
        torch = self.torch
        x = torch.tensor([1000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])
        self.expect_fault(lambda: torch.ops.my_ops.relu_forward(x), 3, 'relu_forward',
                          r'^core 3: op relu_forward: accessor<float,3>\(\): a multicore build '
                          r'supports only the TCM accessor \(tcm_accessor\(\)\); element and '
                          r"stream accessors are undefined behaviour on the device's cores in "
                          r'SPMD mode$')
        x[0] = 999.0
        self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        y = torch.ones(3)
        self.expect_fault(lambda: torch.ops.test_ops.fault(y, 1), 0, 'fault',
                          r'^core 0: op fault: accessor<float,3>\(\): the tensor has dim\(\) '
                          r'1, not 3$')
        self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)

    def test_a_kernel_segfault_names_the_core_and_the_next_call_works(self):
        torch = self.torch
        x = torch.tensor([2000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])
        self.expect_fault(lambda: torch.ops.my_ops.relu_forward(x), 5, 'relu_forward',
                          r'^core 5: op relu_forward: .*(SIGSEGV|segmentation)')
        x[0] = 1.0
        self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        y = torch.ones(3)
        self.expect_fault(lambda: torch.ops.test_ops.fault(y, 2), 0, 'fault',
                          r'^core 0: op fault: .*(SIGSEGV|segmentation)')
        self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)

    def test_output_checks_and_profiles_through_torch_ops(self):
        import build_custom_op
        torch = self.torch
        x = torch.tensor([3000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])
        self.expect_fault(lambda: torch.ops.my_ops.relu_forward(x), None, 'relu_forward',
                          r'^op relu_forward: output coverage: elements \[7, 9\) of the output '
                          r'were written by no core \(on the device they keep what the output '
                          r'buffer held before the op\)$')
        x[0] = 1.0
        with build_custom_op.profile() as profiles:
            self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        self.assertEqual([(p.op, len(p.cores)) for p in profiles], [('relu_forward', 8)])
        self.assertEqual([core.output_elements_written for core in profiles[0].cores],
                         [1, 1, 1, 1, 1, 1, 1, 2])
        self.assertEqual([core.tensor_to_tcm_bytes for core in profiles[0].cores],
                         [12, 12, 12, 12, 12, 12, 12, 16],
                         'the first element read twice, then the share')

    def test_output_checks_from_the_environment_in_a_fresh_process(self):
        python = tap.torch_python() or sys.executable
        script = (
            'import sys, warnings, torch\n'
            f'sys.path.insert(0, {os.path.join(fixture.TOP, "python")!r})\n'
            'from build_custom_op import custom_op\n'
            "custom_op.load_library('faults/librelu.so', target='host')\n"
            'x = torch.tensor([3000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])\n'
            'with warnings.catch_warnings(record=True) as caught:\n'
            '    warnings.simplefilter("always")\n'
            '    y = torch.ops.my_ops.relu_forward(x)\n'
            'print([str(w.message) for w in caught])\n'
            'print(torch.isnan(y).tolist())\n')
        environment = dict(os.environ, BUILD_CUSTOM_OP_OUTPUT_CHECKS='warn',
                           BUILD_CUSTOM_OP_BUNDLES=os.path.join(state['work'], 'fresh-checks'))
        done = subprocess.run([python, '-c', script], cwd=state['work'], env=environment,
                              capture_output=True, text=True)
        self.assertEqual((done.returncode, done.stdout), (0, (
            "['op relu_forward: output coverage: elements [7, 9) of the output were written by no "
            "core (on the device they keep what the output buffer held before the op)']\n"
            '[False, False, False, False, False, False, False, True, True]\n')), done.stderr)

    def test_inputs_the_device_cannot_take_are_refused(self):
        torch = self.torch
        scale = torch.ops.test_ops.scale
        runner = self.runner
        x = torch.ones(3)
        cases = [
            (lambda: scale(torch.ones(3, dtype=torch.float64), 1, 1.0, 1), ValueError,
             'argument 1 (Tensor) of test_ops::scale has dtype float64, which the device does '
             'not have; its dtypes are float32, bfloat16, float16, int32, int8, int64, int16, '
             'uint8'),
            (lambda: scale(torch.ones(3, dtype=torch.bool), 1, 1.0, 1), ValueError,
             'argument 1 (Tensor) of test_ops::scale has dtype bool, which the device does not '
             'have; its dtypes are float32, bfloat16, float16, int32, int8, int64, int16, '
             'uint8'),
            (lambda: scale(torch.ones(3, device='meta'), 1, 1.0, 1), ValueError,
             'argument 1 (Tensor) of test_ops::scale is on meta; the host emulator runs on CPU '
             'tensors: pass it with .cpu()'),
            (lambda: scale([1.0, 2.0], 1, 1.0, 1), TypeError,
             'argument 1 (Tensor) of test_ops::scale must be a torch.Tensor, not list'),
            (lambda: scale(x, torch.tensor(2.0), 1.0, 1), TypeError,
             'argument 2 (Scalar) of test_ops::scale must be a Python number, not Tensor; use '
             '.item() for a one-element tensor'),
            (lambda: scale(x, 1, 'one', 1), TypeError,
             'argument 3 (float) of test_ops::scale must be a Python number, not str'),
            (lambda: scale(x, 1, 1.0, 1.5), TypeError,
             'argument 4 (int) of test_ops::scale must be an integer, not 1.5'),
            (lambda: scale(x, 2**70, 1.0, 1), ValueError,
             'argument 2 (Scalar) of test_ops::scale is 1180591620717411303424, out of the '
             'int64 range of the shape function'),
            (lambda: scale(x, 1, 1.0, 2**40), runner.RunError,
             'scale argument 4 (int _3): 1099511627776 is out of the int32 range'),
            (lambda: scale(x, 1, 1.0), TypeError,
             'test_ops::scale(Tensor _0, number _1, float _2, int _3) takes 4 arguments, but 3 '
             'were given'),
            (lambda: scale(x, 1, 1.0, _3=1), TypeError,
             'test_ops::scale takes its arguments by position, not by name (_3)'),
        ]
        for index, (call, kind, message) in enumerate(cases):
            with self.subTest(case=index):
                with self.assertRaises(kind) as caught:
                    call()
                self.assertEqual(str(caught.exception), message)

    def test_the_host_bundles(self):
        from build_custom_op import _archive
        for directory, names in (('fixture', ['libfixturecustomop.so']),
                                 ('faults', [f'librelucustomop_cpu{i}.so' for i in range(8)])):
            name = 'fixture' if directory == 'fixture' else 'relu'
            with open(os.path.join(state['work'], directory, f'lib{name}.so'), 'rb') as stream:
                members = _archive.read(stream.read())
            with self.subTest(bundle=directory):
                self.assertEqual([member for member, _ in members],
                                 [f'lib{name}shapefcn.so'] + names +
                                 [f'lib{name}customop.ops', 'metadata.json'])
                metadata = json.loads(dict(members)['metadata.json'])
                self.assertEqual(list(metadata), ['versions', 'shapelib', 'ops', 'computelibs',
                                                  'computelib', 'target'])
                self.assertEqual(metadata['target'], 'host')
                self.assertEqual(metadata['computelibs'], {'names': names})
                self.assertTrue(dict(members)[f'lib{name}customop.ops'].startswith(
                    b'# build-custom-op ops '))

    def test_a_host_bundle_is_refused_for_the_device(self):
        from build_custom_op import custom_op
        bundle = os.path.join(state['work'], 'fixture', 'libfixture.so')
        with self.assertRaises(custom_op.CustomOpError) as caught:
            custom_op.load_library(bundle, target='xtensa')
        self.assertEqual(caught.exception.message,
                         f"load_library({bundle!r}): step 1 of 4, reading the bundle [{bundle}]: "
                         f"{bundle} was built for the host's emulated cores (target='host'), not "
                         "for the device (target='xtensa'): load it with target='host' (or set "
                         "CUSTOM_OP_TARGET=host), or build it again with custom_op.load(..., "
                         "target='xtensa')")

    def test_load_library_in_a_fresh_process(self):
        python = tap.torch_python() or sys.executable
        script = (
            'import sys, torch\n'
            f'sys.path.insert(0, {os.path.join(fixture.TOP, "python")!r})\n'
            'from build_custom_op import custom_op\n'
            "custom_op.load_library('fixture/libfixture.so', target='host')\n"
            'x = torch.tensor([1.5, -2.0, 0.25])\n'
            'print(torch.ops.test_ops.scale(x, 2, 0.5, 3).tolist())\n'
            'print(torch.ops.test_ops.row_sums(torch.ones(2, 5)).tolist())\n')
        environment = dict(os.environ, BUILD_CUSTOM_OP_BUNDLES=os.path.join(state['work'],
                                                                            'fresh'))
        done = subprocess.run([python, '-c', script], cwd=state['work'], env=environment,
                              capture_output=True, text=True)
        self.assertEqual((done.returncode, done.stdout), (0, '[4.5, 1.0, 3.25]\n[5.0, 5.0]\n'),
                         done.stderr)
        self.assertEqual(len(os.listdir(os.path.join(state['work'], 'fresh'))), 1)

    def test_a_missing_compute_function_and_one_of_another_signature(self):
        from build_custom_op import custom_op
        work = os.path.join(state['work'], 'missing')
        os.mkdir(work)
        with open(os.path.join(fixture.FIXTURES, 'ops.cpp')) as stream:
            text = stream.read()
        start = text.index('torch::Tensor twice(')
        text = text[:start] + text[text.index('}', start) + 1:]
        text = text.replace('torch::Tensor negate(const torch::Tensor &x)',
                            'torch::Tensor negate(torch::Tensor x)')
        compute = os.path.join(work, 'ops.cpp')
        with open(compute, 'w') as stream:
            stream.write(text)
        with self.assertRaises(custom_op.CustomOpError) as caught:
            fixture.load([compute], os.path.join(work, 'out'), target='host')
        twice = source_of(fixture.SHAPES[1], '"twice", &negate_shape')
        negate = source_of(fixture.SHAPES[1], '"negate", &negate_shape')
        self.assertEqual(
            caught.exception.message,
            f"load('fixture'): step 4 of 6, building the compute library [{compute}]: "
            f'op test_ops::twice (registered at {twice}) runs the compute function twice, but '
            'no compute source defines it.\n'
            f'  It must be defined in one of the compute sources ({compute}) as:\n'
            '    at::Tensor twice(const at::Tensor&)\n'
            f'op test_more::negate (registered at {negate}) runs the compute function negate, '
            f'but {compute} defines negate(at::Tensor), which is another function.\n'
            f'  It must be defined in one of the compute sources ({compute}) as:\n'
            '    at::Tensor negate(const at::Tensor&)')
        self.assertFalse(os.path.exists(os.path.join(work, 'out')))


if __name__ == '__main__':
    tap.main(needs_torch=True)
