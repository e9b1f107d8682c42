"""test_host.py - custom ops on the host target: torch.ops.<ns>.<op> is
PyTorch's own operator, whose CPU kernel (the bridge) runs the kernel on the
emulated GPSIMD cores, with the output allocated from the shape function,
the device's limits, faults raised as exceptions, autograd refused outside
an autograd.Function, TorchScript (saved and loaded in a fresh process),
tracing, a C++ caller through the dispatcher, and bundles loaded in a fresh
process."""

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

state = {}


def setUpModule():
    from build_custom_op import _shape_library, custom_op
    work = state['work'] = tempfile.mkdtemp(prefix='bco-host-test.')
    state['environment'] = dict(os.environ)
    os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(work, 'bundles')
    os.environ.pop('CUSTOM_OP_TIMEOUT', None)
    fixture.load([os.path.join(fixture.FIXTURES, 'ops.cpp')],
                 os.path.join(work, 'fixture'), target='host')
    custom_op.load('relu', [os.path.join(fixture.FIXTURES, 'relu_faults.cpp')],
                   [os.path.join(fixture.MLP, 'shape.cpp')], build_directory=os.path.join(
                       work, 'faults'), multicore=True, target='host')
    # The other shape library calls test_ops::twice from C++.
    _shape_library.build_and_load('other', fixture.OTHER_SHAPES, [], [], False)


def tearDownModule():
    shutil.rmtree(state['work'], ignore_errors=True)
    os.environ.clear()
    os.environ.update(state['environment'])


def in_a_fresh_process(lines, *argv, bundles='fresh', timeout=120):
    """Runs the script lines after loading the fixture's bundle, in a process
    of its own in the work directory; returns (exit status, stdout, stderr).
    Raises subprocess.TimeoutExpired when it has not ended within timeout
    seconds (it is then killed)."""
    python = sys.executable   # one that imports torch: tap.main() saw to it
    script = ('import sys, torch\n'
              f'sys.path.insert(0, {tap.PACKAGE_DIRECTORY!r})\n'
              'from build_custom_op import custom_op\n'
              "custom_op.load_library('fixture/libfixture.so', target='host')\n" + lines)
    environment = dict(os.environ, BUILD_CUSTOM_OP_BUNDLES=os.path.join(state['work'], bundles))
    done = subprocess.run([python, '-c', script, *argv], cwd=state['work'], env=environment,
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


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

    def test_every_device_dtype_reaches_the_kernel_as_itself(self):
        # The kernel multiplies by the dtype it is given: a dtype passed to
        # the runner under another's number gives other bits, or is refused.
        torch = self.torch
        for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int8,
                      torch.int64, torch.int16, torch.uint8):
            with self.subTest(dtype=dtype), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                x = torch.tensor([1, 2, 3, 50]).to(dtype)
                self.assertSameBits(torch.ops.test_ops.twice(x), x * 2)
            # The host SDK warns of a generic 64-bit op, as the device's API does.
            self.assertEqual([str(w.message) for w in caught], [
                'core 0: op test_ops::twice: a 64-bit (kLong) tensor: the device does not support '
                '64-bit ops generically (the API reference no longer lists kLong among the '
                'dtypes)'] if dtype == torch.int64 else [])

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
                          r'^core 3: op my_ops::relu_forward: accessor<float,3>\(\): a multicore build '
                          r'supports only the TCM accessor \(tcm_accessor\(\)\); element and '
                          r"stream accessors are undefined behaviour on the device's cores in "
                          r'SPMD mode$')
        x[0] = 999.0
        self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        y = torch.ones(3)
        self.expect_fault(lambda: torch.ops.test_ops.fault(y, 1), 0, 'fault',
                          r'^core 0: op test_ops::fault: accessor<float,3>\(\): the tensor has dim\(\) '
                          r'1, not 3$')
        self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)

    def test_a_kernel_segfault_names_the_core_and_the_next_call_works(self):
        torch = self.torch
        x = torch.tensor([2000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])
        self.expect_fault(lambda: torch.ops.my_ops.relu_forward(x), 5, 'relu_forward',
                          r'^core 5: op my_ops::relu_forward: .*(SIGSEGV|segmentation)')
        x[0] = 1.0
        self.assertSameBits(torch.ops.my_ops.relu_forward(x), torch.relu(x))
        y = torch.ones(3)
        self.expect_fault(lambda: torch.ops.test_ops.fault(y, 2), 0, 'fault',
                          r'^core 0: op test_ops::fault: .*(SIGSEGV|segmentation)')
        self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)

    def test_a_time_limit(self):
        from build_custom_op import custom_op
        torch = self.torch
        bundle = os.path.join(state['work'], 'fixture', 'libfixture.so')
        y = torch.ones(3)
        for how in ('argument', 'environment'):
            with self.subTest(given_by=how):
                if how == 'argument':
                    custom_op.load_library(bundle, target='host', timeout=0.3)
                else:
                    os.environ['CUSTOM_OP_TIMEOUT'] = '0.3'
                    self.addCleanup(os.environ.pop, 'CUSTOM_OP_TIMEOUT', None)
                    custom_op.load_library(bundle, target='host')
                    del os.environ['CUSTOM_OP_TIMEOUT']
                self.expect_fault(lambda: torch.ops.test_ops.fault(y, 3), 0, 'fault',
                                  r'^core 0: op test_ops::fault: still running when the time limit of '
                                  r'0\.3 s passed')
                # The build is opened again for the next call.
                self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)
        custom_op.load_library(bundle, target='host')
        os.environ['CUSTOM_OP_TIMEOUT'] = 'soon'
        with self.assertRaises(custom_op.CustomOpError) as caught:
            custom_op.load_library(bundle, target='host')
        del os.environ['CUSTOM_OP_TIMEOUT']
        self.assertEqual((caught.exception.message, caught.exception.kind),
                         ("$CUSTOM_OP_TIMEOUT is 'soon': give the seconds a call of an op may "
                          'take, a number above 0 (or leave it out: no limit)', 'usage'))
        with self.assertRaises(custom_op.CustomOpError) as caught:
            custom_op.load_library(bundle, target='host', timeout=0)
        self.assertEqual(caught.exception.message, 'timeout is 0: give the seconds a call of '
                         'an op may take, a number above 0 (or leave it out: no limit)')

    def test_fork_while_another_thread_runs_an_op(self):
        from build_custom_op import custom_op
        torch = self.torch
        bundle = os.path.join(state['work'], 'fixture', 'libfixture.so')
        custom_op.load_library(bundle, target='host', timeout=1.5)
        self.addCleanup(custom_op.load_library, bundle, target='host')
        started = threading.Event()

        def stuck():
            started.set()
            with contextlib.suppress(self.runner.RunError):
                torch.ops.test_ops.fault(torch.ones(3), 3)   # until the time limit

        thread = threading.Thread(target=stuck)
        thread.start()
        started.wait()
        time.sleep(0.3)   # inside the kernel, holding the library's turn
        child = os.fork()
        if child == 0:
            # The child opens the build again on its first call: its ops
            # work (a DataLoader worker's, say), every time.
            try:
                code = 0
                for _ in range(3):
                    if not torch.equal(torch.ops.test_ops.twice(torch.ones(3)),
                                       torch.full((3,), 2.0)):
                        code = 1
            except BaseException:
                code = 2
            os._exit(code)
        status = tap.wait_for_child(child, 10)
        thread.join()
        self.assertIsNotNone(status, "the child hung on a lock the parent's thread held")
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)

    def test_a_relative_bundles_directory_and_a_new_working_directory(self):
        """The build is opened again after a time limit: by the path it was
        extracted to, whatever the working directory is by then."""
        from build_custom_op import custom_op
        torch = self.torch
        bundle = os.path.join(state['work'], 'fixture', 'libfixture.so')
        self.addCleanup(custom_op.load_library, bundle, target='host')
        self.addCleanup(os.chdir, os.getcwd())
        self.addCleanup(os.environ.__setitem__, 'BUILD_CUSTOM_OP_BUNDLES',
                        os.environ['BUILD_CUSTOM_OP_BUNDLES'])
        os.chdir(state['work'])
        os.makedirs('relative_bundles', mode=0o755, exist_ok=True)
        os.environ['BUILD_CUSTOM_OP_BUNDLES'] = 'relative_bundles'
        custom_op.load_library(bundle, target='host', timeout=0.5)
        os.chdir('/')
        with self.assertRaises(self.runner.RunError) as caught:
            torch.ops.test_ops.fault(torch.ones(3), 3)   # until the time limit
        self.assertEqual(caught.exception.kind, 'timeout')
        self.assertSameBits(torch.ops.test_ops.twice(torch.ones(3)), torch.full((3,), 2.0))

    def test_what_a_kernel_prints_and_warns(self):
        torch = self.torch
        y = torch.ones(2)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            self.assertSameBits(torch.ops.test_ops.fault(y, 4), y)
        self.assertEqual(printed.getvalue(), 'fault: mode 4\n')
        self.assertEqual([(w.category, str(w.message), w.filename) for w in caught],
                         [(self.runner.RunWarning, 'core 0: op test_ops::fault: mode 4 warns', __file__)])
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter('error')
            with self.assertRaises(self.runner.RunWarning) as raised:
                torch.ops.test_ops.fault(y, 4)
        self.assertEqual(str(raised.exception), 'core 0: op test_ops::fault: mode 4 warns')
        self.assertSameBits(torch.ops.test_ops.fault(y, 0), y)

    def test_output_checks_and_profiles_through_torch_ops(self):
        import build_custom_op
        torch = self.torch
        x = torch.tensor([3000.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0])
        self.expect_fault(lambda: torch.ops.my_ops.relu_forward(x), None, 'relu_forward',
                          r'^op my_ops::relu_forward: output coverage: elements \[7, 9\) of the output '
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
        python = sys.executable   # one that imports torch: tap.main() saw to it
        script = (
            'import sys, warnings, torch\n'
            f'sys.path.insert(0, {tap.PACKAGE_DIRECTORY!r})\n'
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
            "['op my_ops::relu_forward: output coverage: elements [7, 9) of the output were written by no "
            "core (on the device they keep what the output buffer held before the op)']\n"
            '[False, False, False, False, False, False, False, True, True]\n')), done.stderr)

    def test_inputs_the_device_cannot_take_are_refused(self):
        torch = self.torch
        scale = torch.ops.test_ops.scale
        runner = self.runner
        x = torch.ones(3)
        dtypes = 'float32, bfloat16, float16, int32, int8, int64, int16, uint8'
        cases = [
            (lambda: scale(torch.ones(3, dtype=torch.float64), 1, 1.0, 1), ValueError,
             'test_ops::scale argument 1 (Tensor _0) has dtype float64, which the device does '
             f'not have (its dtypes: {dtypes}); convert it first, e.g. with .to(torch.float32)'),
            (lambda: scale(torch.ones(3, dtype=torch.bool), 1, 1.0, 1), ValueError,
             'test_ops::scale argument 1 (Tensor _0) has dtype bool, which the device does not '
             f'have (its dtypes: {dtypes}); convert it first, e.g. with .to(torch.float32)'),
            (lambda: scale(torch.ones(3).to_sparse(), 1, 1.0, 1), ValueError,
             'test_ops::scale argument 1 (Tensor _0) is a torch.sparse_coo tensor; the device '
             'takes dense (strided) tensors: pass it with .to_dense()'),
            (lambda: scale(x, 1j, 1.0, 1), TypeError,
             'test_ops::scale argument 2 (number _1) must be a real number, not complex'),
            (lambda: scale(x, 1, 1.0, 2**40), runner.RunError,
             'test_ops::scale argument 4 (int _3): 1099511627776 is out of the int32 range'),
            (lambda: scale(x, 1, 1e39, 1), runner.RunError,
             'test_ops::scale argument 3 (float _2): 1e+39 is out of the float32 range'),
            (lambda: scale(torch.tensor(1.0), 1, 1.0, 1), runner.RunError,
             'test_ops::scale argument 1 (Tensor _0) has 0 dimensions; a device tensor has 1 to 8'),
        ]
        for index, (call, kind, message) in enumerate(cases):
            with self.subTest(case=index):
                with self.assertRaises(kind) as caught:
                    call()
                self.assertEqual(str(caught.exception), message)
        # PyTorch's schema refuses the others first, naming the argument.
        declaration = 'test_ops::scale(Tensor _0, Scalar _1, float _2, int _3) -> Tensor _0'
        parsed = [
            (lambda: scale([1.0, 2.0], 1, 1.0, 1),
             "Expected a value of type 'Tensor' for argument '_0' but instead found type 'list'."),
            (lambda: scale(x, torch.tensor(2.0), 1.0, 1),
             "Expected a value of type 'number' for argument '_1' but instead found type "
             "'Tensor'."),
            (lambda: scale(x, 1, 'one', 1),
             "Expected a value of type 'float' for argument '_2' but instead found type 'str'."),
            (lambda: scale(x, 1, 1.0, 1.5),
             "Expected a value of type 'int' for argument '_3' but instead found type 'float'."),
            (lambda: scale(x, 1, 1.0),
             f"is missing value for argument '_3'. Declaration: {declaration}"),
        ]
        for index, (call, message) in enumerate(parsed):
            with self.subTest(parsed=index):
                with self.assertRaises(RuntimeError) as caught:
                    call()
                self.assertEqual(str(caught.exception).split('\n')[0],
                                 f'test_ops::scale() {message}')
        # An int beyond 64 bits: PyTorch 1.13's schema refuses it, 2.x's
        # binding cannot convert it.
        with self.assertRaises((RuntimeError, OverflowError)) as caught:
            scale(x, 2**70, 1.0, 1)
        self.assertEqual(str(caught.exception).split('\n')[0],
                         "test_ops::scale() Expected a value of type 'number' for argument '_1' "
                         "but instead found type 'int'." if fixture.torch_version() < (2, 0)
                         else 'int too big to convert')
        # By name, as the schema names them.
        self.assertSameBits(scale(x, 1, 2.0, _3=1), torch.full((3,), 3.0))

    def test_views_are_read_as_they_show(self):
        torch = self.torch
        x = torch.tensor([1.5, -2.0, 0.25, 3.0])
        negative = torch._neg_view(x)
        self.assertTrue(negative.is_neg())
        self.assertSameBits(torch.ops.test_ops.twice(negative), x * -2)
        self.assertSameBits(torch.ops.test_ops.twice(x[::2]), torch.tensor([3.0, 0.5]))
        self.assertSameBits(torch.ops.test_ops.twice(x.expand(2, 4)[1]), x * 2)
        self.assertSameBits(x, torch.tensor([1.5, -2.0, 0.25, 3.0]))

    def test_ops_are_pytorch_operators_with_a_cpu_kernel(self):
        torch = self.torch
        for namespace, op, _, _ in fixture.OPS:
            with self.subTest(op=op):
                self.assertIsInstance(getattr(getattr(torch.ops, namespace), op),
                                      torch._ops.OpOverloadPacket)
                self.assertTrue(torch._C._dispatch_has_kernel_for_dispatch_key(
                    f'{namespace}::{op}', 'CPU'))
        # The shape function is the op's CompositeExplicitAutograd kernel
        # (test_tracers.py checks the others).
        self.assertTrue(torch._C._dispatch_has_kernel_for_dispatch_key(
            'test_ops::scale', 'CompositeExplicitAutograd'))
        self.assertFalse(torch._C._dispatch_has_kernel_for_dispatch_key(
            'test_ops::scale', 'CompositeImplicitAutograd'))

    def test_a_backward_through_an_op_is_refused(self):
        torch = self.torch
        x = torch.tensor([1.0, -2.0]).requires_grad_()
        y = torch.ops.test_ops.twice(x)   # runs: torch.export, say, runs no backward
        self.assertSameBits(y.detach(), torch.tensor([2.0, -4.0]))
        self.assertEqual((y.requires_grad, y.grad_fn.name()),
                         (True, 'test_ops::twice (no derivative)'))
        with self.assertRaises(RuntimeError) as caught:
            y.sum().backward()
        self.assertEqual(str(caught.exception), fixture.reverse_refusal('test_ops::twice'))
        with torch.no_grad():
            self.assertSameBits(torch.ops.test_ops.twice(x), torch.tensor([2.0, -4.0]))
        y = torch.ops.test_ops.twice(x.detach())
        self.assertFalse(y.requires_grad)

    def test_tracing_records_the_op(self):
        torch = self.torch
        traced = torch.jit.trace(lambda t: torch.ops.test_ops.scale(t, 2, 0.5, 3),
                                 torch.tensor([1.0, 2.0, 3.0]))
        kinds = [node.kind() for node in traced.graph.nodes()]
        self.assertIn('test_ops::scale', kinds)
        self.assertNotIn('aten::fill_', kinds)
        x = torch.tensor([-1.5, 10.0, 0.25])
        self.assertSameBits(traced(x), self.scale_expected(x, 2, 0.5, 3))

    def test_a_fault_in_a_scripted_call_and_the_call_after_it(self):
        torch = self.torch

        @torch.jit.script
        def run(x, mode: int):
            return torch.ops.test_ops.fault(x, mode)

        y = torch.ones(3)
        with self.assertRaises(RuntimeError) as caught:
            run(y, 2)
        self.assertRegex(str(caught.exception), r'(?s)^The following operation failed in the '
                         r'TorchScript interpreter\..*torch\.ops\.test_ops\.fault.*\n'
                         r'RuntimeError: core 0: op test_ops::fault: .*(SIGSEGV|segmentation)')
        self.assertSameBits(run(y, 0), y)

    def test_a_scripted_module_saved_and_loaded_in_a_fresh_process(self):
        torch = self.torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.ops.test_more.negate(torch.ops.test_ops.scale(x, 2, 0.5, 3))

        saved = os.path.join(state['work'], 'model.pt')
        torch.jit.script(Model()).save(saved)
        status, stdout, stderr = in_a_fresh_process(
            'model = torch.jit.load(sys.argv[1])\n'
            'print(model(torch.tensor([1.5, -2.0, 0.25])).tolist())\n', saved,
            bundles='fresh-script')
        self.assertEqual((status, stdout), (0, '[-4.5, -1.0, -3.25]\n'), stderr)

    def test_a_cpp_caller_through_the_dispatcher(self):
        torch = self.torch
        # test_caller::call_twice (tests/torch/fixtures/shape_other.cpp) calls
        # test_ops::twice through c10::Dispatcher.
        x = torch.tensor([1.0, -0.5])
        self.assertSameBits(torch.ops.test_caller.call_twice(x), x * 2)
        with self.assertRaises(ValueError) as caught:
            torch.ops.test_caller.call_twice(torch.ones(2, dtype=torch.float64))
        self.assertEqual(str(caught.exception), 'test_ops::twice argument 1 (Tensor _0) has '
                         'dtype float64, which the device does not have (its dtypes: '
                         'float32, bfloat16, float16, int32, int8, int64, int16, uint8)'
                         '; convert it first, e.g. with .to(torch.float32)')

    def test_a_cpp_thread_calling_while_python_holds_the_gil(self):
        """test_caller::fault_on_a_thread (tests/torch/fixtures/shape_other.cpp)
        calls test_ops::fault on a C++ thread and waits for it holding the
        GIL: what the kernel prints and the error of a failed call reach
        that thread without Python, and nothing waits for the GIL."""
        script = (
            'from build_custom_op import _shape_library\n'
            f'_shape_library.build_and_load("other", {fixture.OTHER_SHAPES!r}, [], [], False)\n'
            'call = torch.ops.test_caller.fault_on_a_thread\n'
            'print(call(torch.ones(2), 4).tolist(), flush=True)\n'
            'try:\n'
            '    call(torch.ones(2), 2)\n'
            'except RuntimeError as error:\n'
            '    print(type(error).__name__, str(error).splitlines()[0], flush=True)\n'
            'print(call(torch.ones(2), 0).tolist(), flush=True)\n')
        try:
            status, stdout, stderr = in_a_fresh_process(script, bundles='fresh-thread',
                                                        timeout=60)
        except subprocess.TimeoutExpired as expired:
            self.fail(f'the calls did not end within 60 s (a deadlock): {expired.stdout!r}')
        lines = stdout.splitlines()
        self.assertEqual((status, lines[:2], lines[3:]),
                         (0, ['fault: mode 4', '[1.0, 1.0]'], ['[1.0, 1.0]']), stderr)
        self.assertRegex(lines[2], r'^RuntimeError core 0: op test_ops::fault: .*(SIGSEGV|segmentation)')
        self.assertIn('warning: core 0: op test_ops::fault: mode 4 warns\n', stderr)

    def test_a_cxx_standard_of_extra_cflags_goes_to_the_compute_build_only(self):
        import torch
        from build_custom_op import custom_op
        out = os.path.join(state['work'], 'standard')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            custom_op.load('fixture', [os.path.join(fixture.FIXTURES, 'ops.cpp')],
                           fixture.SHAPES, extra_cflags=fixture.FLAGS + ['-std=gnu++14'],
                           extra_include_paths=fixture.INCLUDES, build_directory=out,
                           target='host')
        self.addCleanup(custom_op.load_library, os.path.join(state['work'], 'fixture',
                                                             'libfixture.so'), target='host')
        self.assertEqual([(w.category, str(w.message), w.filename) for w in caught],
                         [(custom_op.CustomOpWarning,
                           "load('fixture'): -std=gnu++14 of extra_cflags is passed to the "
                           'compute build only; the shape library is built in the C++ standard '
                           f"of PyTorch {torch.__version__} (torch.utils.cpp_extension's own "
                           '-std=)', __file__)])
        with open(os.path.join(out, 'libfixturecustomop.build', 'compile_commands.json')) as s:
            commands = json.load(s)
        self.assertEqual([os.path.basename(command['arguments'][-1]) for command in commands
                          if '-std=gnu++14' in command['arguments']],
                         ['ops.cpp', 'wrapper.cpp'])
        self.assertSameBits(torch.ops.test_ops.twice(torch.ones(2)), torch.full((2,), 2.0))

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
                                                  'computelib', 'target', 'torch',
                                                  'sha256'])
                self.assertEqual(metadata['target'], 'host')
                self.assertEqual(metadata['sha256'], {
                    member: hashlib.sha256(data).hexdigest() for member, data in members
                    if member != 'metadata.json'})
                self.assertEqual(metadata['computelibs'], {'names': names})
                self.assertTrue(dict(members)[f'lib{name}customop.ops'].startswith(
                    b'# build-custom-op ops '))

    def test_an_unchanged_load_keeps_the_bundle_only_when_it_is_the_right_one(self):
        """A load() with nothing changed does not write lib<name>.so again
        when the file is the bundle it would write (the cache's record of
        it); a file damaged in any way is replaced by the right bundle."""
        directory = os.path.join(state['work'], 'kept')
        path = os.path.join(directory, 'libfixture.so')
        sources = [os.path.join(fixture.FIXTURES, 'ops.cpp')]
        fixture.load(sources, directory, target='host')
        with open(path, 'rb') as stream:
            right = stream.read()
        inode = os.stat(path).st_ino
        fixture.load(sources, directory, target='host')
        self.assertEqual(os.stat(path).st_ino, inode)   # kept, not written again

        def flipped(data):
            middle = len(data) // 2
            return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]

        for damage, data in (('one byte changed', flipped(right)),
                             ('truncated', right[:len(right) // 2]),
                             ('one byte more', right + b'\0'),
                             ('empty', b''),
                             ('a byte changed in the symbol index', right[:70] +
                              bytes([right[70] ^ 0x01]) + right[71:])):
            with self.subTest(damage=damage):
                with open(path, 'r+b') as stream:
                    stream.truncate(0)
                    stream.write(data)
                fixture.load(sources, directory, target='host')
                with open(path, 'rb') as stream:
                    self.assertEqual(stream.read(), right)
        with self.subTest(damage='mode 600'):
            os.chmod(path, 0o600)
            fixture.load(sources, directory, target='host')
            mask = os.umask(0)
            os.umask(mask)
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o644 & ~mask)
        x = self.torch.tensor([1.0, -2.0])
        self.assertSameBits(self.torch.ops.test_ops.twice(x), x * 2)

    def test_an_unchanged_load_imports_no_module_it_does_not_run(self):
        """A load() with nothing changed, in a fresh process, imports
        neither the bundle's archive reader and writer, nor the check of
        the op names, nor the runner's binding, the copies of its
        structures or its Python API: the bridge takes the runner's
        functions by address; once the compute build is recorded as
        settled, nor compile() and libbuildcustomop's binding."""
        directory = os.path.join(state['work'], 'unchanged')
        sources = [os.path.join(fixture.FIXTURES, 'ops.cpp')]
        fixture.load(sources, directory, target='host')
        script = (
            'import sys\n'
            f'sys.path.insert(0, {fixture.HERE!r})\n'
            'import fixture\n'
            'from build_custom_op import _fingerprint\n'
            '_fingerprint.SETTLED_NS = 0   # settled after a tick of the clock, not 2 s\n'
            f'fixture.load({sources!r}, {directory!r}, target="host")\n'
            'print(sorted(name for name in sys.modules if name.startswith("build_custom_op.")\n'
            '             and name.split(".")[1] in ("_archive", "_op_names", "_run_binding",\n'
            '                                        "_run_types", "runner", "_profile",\n'
            '                                        "testing", "_compile", "_build_binding")))\n')
        imported = []
        for _ in range(2):
            time.sleep(0.05)   # past the tick of the last change
            done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            imported.append(done.stdout)
        self.assertEqual(imported, ["['build_custom_op._build_binding', 'build_custom_op._compile']\n",
                                    '[]\n'])

    def test_an_unchanged_load_trusts_no_file_changed_since_it_was_read(self):
        """Once the files have settled, a load() with nothing changed reads
        none of them again (their digests are known by their stat
        fingerprints); a file changed since, even with its size and mtime
        put back by os.utime, or replaced by a rename, is read again: the
        bundle is rewritten, the extraction made again, and a compute
        library changed in the build directory is what the bundle holds."""
        from build_custom_op import _bundle
        read = fixture.files_read_again(self)
        directory = os.path.join(state['work'], 'fingerprinted')
        path = os.path.join(directory, 'libfixture.so')
        sources = [os.path.join(fixture.FIXTURES, 'ops.cpp')]

        def load():
            time.sleep(0.05)   # past the tick of the last change
            del read[:]
            fixture.load(sources, directory, target='host')

        load()
        load()   # reads what the first wrote
        load()
        self.assertEqual(read, [])
        with open(path, 'rb') as stream:
            right = stream.read()
        extraction = os.path.join(os.environ['BUILD_CUSTOM_OP_BUNDLES'],
                                  _bundle.md5_hex(right))
        compute = os.path.join(directory, 'libfixturecustomop.build', 'libfixturecustomop.so')

        def changed(target, in_place=True):
            """Flips the file's third last byte (in a section header, which
            the loader does not read), its size and mtime put back."""
            info = os.stat(target)
            with open(target, 'rb') as stream:
                data = bytearray(stream.read())
            data[-3] ^= 0x01
            written = target if in_place else target + '.new'
            with open(written, 'r+b' if in_place else 'wb') as stream:
                stream.write(data)
            os.utime(written, ns=(info.st_atime_ns, info.st_mtime_ns))
            if not in_place:
                os.rename(written, target)
            after = os.stat(target)
            self.assertEqual((after.st_size, after.st_mtime_ns), (info.st_size, info.st_mtime_ns))
            return bytes(data)

        for in_place in (True, False):
            how = 'in place' if in_place else 'by a rename'
            with self.subTest(changed=f'the bundle, {how}'):
                changed(path, in_place)
                load()
                self.assertIn(path, read)
                with open(path, 'rb') as stream:
                    self.assertEqual(stream.read(), right)
            with self.subTest(changed=f'an extracted compute library, {how}'):
                extracted = os.path.join(extraction, 'libfixturecustomop.so')
                with open(extracted, 'rb') as stream:
                    whole = stream.read()
                changed(extracted, in_place)
                load()
                self.assertIn(extracted, read)
                with open(extracted, 'rb') as stream:
                    self.assertEqual(stream.read(), whole)
        with self.subTest(changed='the compute library in the build directory'):
            now = changed(compute)
            load()
            self.assertIn(compute, read)
            with open(compute, 'rb') as stream:
                now = stream.read()   # as the compute build left it
            bundle = _bundle.read(path, 'host')
            self.assertEqual(bundle.member('libfixturecustomop.so'), now)
            load()   # reads the bundle and the extraction the last one wrote
            load()
            self.assertEqual(read, [])
        x = self.torch.tensor([1.0, -2.0])
        self.assertSameBits(self.torch.ops.test_ops.twice(x), x * 2)

    def test_a_settled_compute_build_is_not_called_again_until_what_it_rests_on_changes(self):
        """A host compute build that had nothing to do, once what it rests
        on has settled, is recorded, and the next load() with nothing
        changed calls no build; a change to a source, a header it
        includes, an object it made, the environment, a directory on PATH
        searched before the compiler, or verbose calls the build again (and
        a changed source or header is compiled again)."""
        from build_custom_op import _compile, _fingerprint
        self.addCleanup(setattr, _fingerprint, 'SETTLED_NS', _fingerprint.SETTLED_NS)
        _fingerprint.SETTLED_NS = 0   # settled after a tick of the clock, not 2 s
        calls = []
        call = _compile._call
        self.addCleanup(setattr, _compile, '_call', call)

        def counted(function_name, *arguments):
            calls.append(function_name)
            return call(function_name, *arguments)

        _compile._call = counted
        work = tempfile.mkdtemp(dir=state['work'], prefix='settled.')
        source = os.path.join(work, 'ops.cpp')
        header = os.path.join(work, 'settled_extra.h')
        with open(header, 'w') as stream:
            stream.write('/* included by ops.cpp */\n')
        with open(os.path.join(fixture.FIXTURES, 'ops.cpp')) as stream:
            text = stream.read()
        with open(source, 'w') as stream:
            stream.write('#include "settled_extra.h"\n' + text)
        searched = os.path.join(work, 'bin')   # on PATH before the compiler
        os.mkdir(searched)
        self.addCleanup(os.environ.__setitem__, 'PATH', os.environ['PATH'])
        os.environ['PATH'] = searched + os.pathsep + os.environ['PATH']
        directory = os.path.join(work, 'build')
        built = os.path.join(directory, 'libfixturecustomop.build')
        obj = os.path.join(built, 'ops.o')

        def load(**options):
            time.sleep(0.05)   # past the tick of the last change
            before = len(calls)
            fixture.load([source], directory, target='host', **options)
            x = self.torch.tensor([1.5, -2.0])
            self.assertSameBits(self.torch.ops.test_ops.twice(x), x * 2)
            return len(calls) - before

        def appended(path, text):
            with open(path, 'a') as stream:
                stream.write(text)

        # Built; nothing to do, recorded; then no build called.
        self.assertEqual((load(), load(), load(), load()), (1, 1, 0, 0))
        for what, change, compiled in (
                ('the source', lambda: appended(source, '// edited\n'), True),
                ('an included header', lambda: appended(header, '// edited\n'), True),
                ('an object', lambda: os.unlink(obj), True),
                ('the environment', lambda: os.environ.__setitem__('BCO_SETTLED_TEST', '1'),
                 False),
                # The compiler found elsewhere: its place is in the commands.
                ('a directory on PATH', lambda: os.symlink(
                    shutil.which('clang++') or shutil.which('c++'),
                    os.path.join(searched, 'clang++' if shutil.which('clang++') else 'c++')),
                 True)):
            with self.subTest(changed=what):
                object_before = os.stat(obj).st_mtime_ns if os.path.exists(obj) else None
                change()
                self.assertEqual(load(), 1)
                self.assertEqual(os.stat(obj).st_mtime_ns != object_before, compiled)
                # After a compile, the next build has nothing to do and is
                # recorded; a build that had nothing to do was recorded.
                self.assertEqual((load(), load()), (1, 0) if compiled else (0, 0))
        with self.subTest(changed='verbose'):
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(load(verbose=True), 1)
            self.assertEqual(load(), 0)
        # A record that does not hold up is not followed: the build is
        # called, and records again.
        from build_custom_op import _torch_build, custom_op
        keys = []
        identity = custom_op._settled_build_identity
        self.addCleanup(setattr, custom_op, '_settled_build_identity', identity)
        custom_op._settled_build_identity = lambda arguments: keys.append(
            identity(arguments)) or keys[-1]
        self.assertEqual(load(), 0)
        good = _torch_build.record(_torch_build.SETTLED_BUILDS, keys[-1])
        library = good['libraries'][0]
        for what, record in (
                ('a library it does not list', dict(good, libraries=[library, '/bin/sh'])),
                ('an empty list', dict(good, settled=[])),
                ('a wrong stat', dict(good, settled=[[path, [0] * 5]
                                                     for path, _ in good['settled']])),
                ('not a list', dict(good, settled=7)),
                ('no record', None)):
            with self.subTest(record=what):
                _torch_build.keep_record(_torch_build.SETTLED_BUILDS, keys[-1], record)
                self.assertEqual((load(), load()), (1, 0))
                self.assertEqual(_torch_build.record(_torch_build.SETTLED_BUILDS, keys[-1]),
                                 good)

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

    def edited_bundle(self, edit):
        """The multicore relu's bundle with edit(name, data) applied to each
        member, written to damaged.so; returns its path."""
        from build_custom_op import _archive
        with open(os.path.join(state['work'], 'faults', 'librelu.so'), 'rb') as stream:
            members = _archive.read(stream.read())
        path = os.path.join(state['work'], 'damaged.so')
        with open(path, 'wb') as stream:
            stream.write(_archive.build([(name, edit(name, data)) for name, data in members]))
        return path

    def refused_before_loading(self, path, member):
        """load_library(path) is refused at reading the bundle, naming the
        member, and the ops run the compute library loaded before."""
        from build_custom_op import custom_op
        with self.assertRaises(custom_op.CustomOpError) as caught:
            custom_op.load_library(path, target='host')
        self.assertEqual(caught.exception.step, 'reading the bundle')
        self.assertRegex(caught.exception.message, rf'^load_library\({re.escape(repr(path))}\): '
                         rf'step 1 of 4, reading the bundle \[{re.escape(path)}\]: '
                         rf'{re.escape(path)}: its member {re.escape(member)} was changed after '
                         r'the bundle was made \(its sha256 is [0-9a-f]{64}, metadata\.json '
                         r'records [0-9a-f]{64}\); rebuild the bundle with custom_op\.load\(\)$')
        x = self.torch.linspace(-1.0, 1.0, 9)
        self.assertSameBits(self.torch.ops.my_ops.relu_forward(x), self.torch.relu(x))

    def test_a_damaged_compute_library_in_a_bundle(self):
        def damage(name, data):
            if name == 'librelucustomop_cpu3.so':   # the md5 of the original is cpu0's only
                middle = len(data) // 2
                data = data[:middle] + bytes([data[middle] ^ 0xff]) + data[middle + 1:]
            return data
        self.refused_before_loading(self.edited_bundle(damage), 'librelucustomop_cpu3.so')

    def test_an_edited_ops_record_in_a_bundle(self):
        # One kind letter changed, the record's length kept: the runner would
        # convert numbers by the edited kind.
        def edit(name, data):
            return data.replace(b'T', b'S', 1) if name.endswith('.ops') else data
        path = self.edited_bundle(edit)
        self.refused_before_loading(path, 'librelucustomop.ops')

    def test_an_edited_shape_library_in_a_bundle_is_not_loaded(self):
        # Its first bytes of code overwritten: loading it would crash.
        def edit(name, data):
            if name != 'librelushapefcn.so':
                return data
            return data[:4096] + b'\xff' * 4096 + data[8192:]
        status, stdout, stderr = in_a_fresh_process(
            'from build_custom_op import custom_op\n'
            'try:\n'
            f'    custom_op.load_library({self.edited_bundle(edit)!r}, target="host")\n'
            'except custom_op.CustomOpError as error:\n'
            '    print(error.step)\n', bundles='fresh-edited')
        self.assertEqual((status, stdout), (0, 'reading the bundle\n'), stderr)

    def test_ctrl_c_stops_an_op(self):
        status, stdout, stderr = in_a_fresh_process(
            'import os, signal, threading\n'
            'threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()\n'
            'try:\n'
            '    torch.ops.test_ops.fault(torch.ones(3), 3)   # never returns\n'
            'except KeyboardInterrupt:\n'
            '    print("KeyboardInterrupt")\n'
            'print(torch.ops.test_ops.fault(torch.ones(3), 0).tolist())\n',
            bundles='fresh-interrupt')
        self.assertEqual((status, stdout), (0, 'KeyboardInterrupt\n[1.0, 1.0, 1.0]\n'), stderr)

    def test_load_library_in_a_fresh_process(self):
        status, stdout, stderr = in_a_fresh_process(
            'x = torch.tensor([1.5, -2.0, 0.25])\n'
            'print(torch.ops.test_ops.scale(x, 2, 0.5, 3).tolist())\n'
            'print(torch.ops.test_ops.row_sums(torch.ones(2, 5)).tolist())\n')
        self.assertEqual((status, stdout), (0, '[4.5, 1.0, 3.25]\n[5.0, 5.0]\n'), stderr)
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
        # No bundle; the compute build's directory is kept for the next build.
        self.assertEqual(os.listdir(os.path.join(work, 'out')), ['libfixturecustomop.build'])
        self.assertTrue(os.path.isfile(os.path.join(work, 'out', 'libfixturecustomop.build',
                                                    'wrapper.cpp')))


if __name__ == '__main__':
    tap.main(needs_torch=True)
