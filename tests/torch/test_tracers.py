"""test_tracers.py - host ops stay whole in PyTorch's tracers: the op's
kernels in the dispatcher (the shape function at CompositeExplicitAutograd,
none at CompositeImplicitAutograd, the emulator at CPU, a Meta kernel,
refusals for the other backends), make_fx (real, fake and symbolic),
functionalize, FakeTensorMode and meta tensors; on PyTorch 2.x also
torch.compile, torch.export and torch.library.opcheck.  Each graph holds
the op and computes what eager calls do on new inputs."""

import os
import re
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402


def setUpModule():
    from build_custom_op import custom_op
    work = fixture.enter_work_directory('bco-tracers-test.')
    fixture.load_examples_for_the_host(work)
    # test_extra::twice, whose shape function keeps sizes symbolic, and
    # test_extra::iota, which has no tensor argument.
    custom_op.load('extra', [os.path.join(fixture.FIXTURES, 'ops.cpp')],
                   [os.path.join(fixture.FIXTURES, 'shape_extra.cpp')],
                   build_directory=os.path.join(work, 'extra'), target='host')


def tearDownModule():
    fixture.leave_work_directory()


def torch_major():
    import torch
    return int(torch.__version__.split('.')[0])


# The examples' ops: (op, a function of a tensor x that calls it, what it
# computes with PyTorch's own ops, the sizes of x).
def examples():
    import torch
    ops = torch.ops
    return [
        ('my_ops::relu_forward', lambda x: ops.my_ops.relu_forward(x), torch.relu, (3, 4)),
        ('my_ops::relu_backward', lambda x: ops.my_ops.relu_backward(x * 2, x),
         lambda x: torch.where(x > 0, x * 2, torch.zeros_like(x)), (3, 4)),
        ('test_ops::scale', lambda x: ops.test_ops.scale(x, 2, 0.5, 3), lambda x: x * 1.0 + 3,
         (7,)),
        ('test_ops::row_sums', lambda x: ops.test_ops.row_sums(x), sequential_sums, (3, 4)),
        ('test_ops::twice', lambda x: ops.test_ops.twice(x), lambda x: x * 2, (3, 4)),
        ('test_more::negate', lambda x: ops.test_more.negate(x), lambda x: -x, (3, 4)),
    ]


def sequential_sums(x):
    """The sum of each row of x, element after element, as the kernel adds."""
    import torch
    sums = torch.zeros(x.shape[0])
    for j in range(x.shape[1]):
        sums = sums + x[:, j]
    return sums


def called_ops(graph_module):
    """The names of the ops a graph calls (call_function nodes), in order."""
    names = []
    for node in graph_module.graph.nodes:
        if node.op == 'call_function':
            target = node.target
            name = getattr(target, '__name__', None) or str(target)
            if hasattr(target, '_schema'):
                name = target._schema.name
            elif hasattr(target, '_qualified_op_name'):
                name = target._qualified_op_name
            names.append(name)
    return names


def kernels_of(name):
    """{dispatch key: where its kernel was registered} from the op's
    registrations (torch._C._dispatch_dump)."""
    import torch
    kernels = {}
    for line in torch._C._dispatch_dump(name).splitlines():
        match = re.match(r'^(\w+)(\[alias\])?: (?:fallthrough )?registered at (\S+?):\d+', line)
        if match:
            kernels[match.group(1)] = os.path.basename(match.group(3))
    return kernels


def table_of(name):
    """{runtime dispatch key: (where its kernel comes from, how)} from the
    op's dispatch table (torch._C._dispatch_dump_table)."""
    import torch
    table = {}
    for line in torch._C._dispatch_dump_table(name).splitlines():
        match = re.match(r'^(\w+): (?:fallthrough )?registered at (\S+?):\d+ \[(.*)\]$', line)
        if match:
            table[match.group(1)] = (os.path.basename(match.group(2)), match.group(3))
    return table


class TracerTest(fixture.SameBits, unittest.TestCase):
    def setUp(self):
        import torch
        self.torch = torch
        torch.manual_seed(0)

    def inputs(self, *shape):
        return self.torch.randn(*shape)

    def test_the_kernels_of_a_host_op(self):
        torch = self.torch
        for name, shape_source in (('my_ops::relu_forward', 'shape.cpp'),
                                   ('test_ops::scale', 'shape_ops.cpp'),
                                   ('test_more::negate', 'shape_more.cpp')):
            with self.subTest(op=name):
                kernels = kernels_of(name)
                self.assertNotIn('CompositeImplicitAutograd', kernels)
                self.assertFalse(torch._C._dispatch_has_kernel_for_dispatch_key(
                    name, 'CompositeImplicitAutograd'))
                self.assertEqual(kernels['CompositeExplicitAutograd'], shape_source)
                for key in ('CPU', 'Meta', 'Autograd', 'ADInplaceOrView', 'CUDA', 'XLA',
                            'Lazy', 'PrivateUse1', 'SparseCPU', 'QuantizedCPU'):
                    self.assertEqual(kernels.get(key), 'torch_bridge.cpp', key)
                # No backend runs the shape function: only a call that reaches
                # no backend at all (Undefined) would.
                table = table_of(name)
                served = sorted(key for key, (where, _) in table.items()
                                if where == shape_source and key != 'Undefined')
                self.assertEqual(served, [])
                self.assertEqual(table['CPU'], ('torch_bridge.cpp', 'kernel'))
                self.assertEqual(table['Meta'], ('torch_bridge.cpp', 'kernel'))

    def test_the_other_backends_refuse(self):
        torch = self.torch
        import torch._lazy.ts_backend
        torch._lazy.ts_backend.init()   # a backend this machine has: 'lazy'
        relu = torch.ops.my_ops.relu_forward
        cases = [
            (torch.ones(2, 3, device='lazy'), 'my_ops::relu_forward argument 1 (Tensor _0) is '
             'on lazy:0; the emulated cores run on CPU tensors: pass it with .cpu()'),
            (torch.ones(2, 3).to_sparse(), 'my_ops::relu_forward argument 1 (Tensor _0) is a '
             'torch.sparse_coo tensor; the device takes dense (strided) tensors: pass it with '
             '.to_dense()'),
            (torch.quantize_per_tensor(torch.ones(3), 0.5, 0, torch.qint8),
             'my_ops::relu_forward argument 1 (Tensor _0) has dtype qint8, which the device '
             'does not have (its dtypes: float32, bfloat16, float16, int32, int8, int64, '
             'int16, uint8); convert it first, e.g. with .to(torch.float32)'),
        ]
        for index, (tensor, message) in enumerate(cases):
            with self.subTest(case=index):
                with self.assertRaises(ValueError) as caught:
                    relu(tensor)
                self.assertEqual(str(caught.exception), message)

    def test_a_shape_function_that_is_composite_implicit_is_refused(self):
        from build_custom_op import custom_op
        out = os.path.join(fixture.work_directory(), 'old')
        with self.assertRaises(custom_op.CustomOpError) as caught:
            custom_op.load('old', [os.path.join(fixture.FIXTURES, 'ops.cpp')],
                           [os.path.join(fixture.FIXTURES, 'shape_old.cpp')],
                           build_directory=out, target='host')
        base = os.path.join(re.escape(os.environ['BUILD_CUSTOM_OP_BUNDLES']), '[0-9a-f]+',
                            'liboldcustomop')
        self.assertRegex(caught.exception.message, re.escape(
            "load('old'): step 6 of 6, registering the ops [") + base + re.escape(
            ']: the shape function of test_old::twice is not the op\'s '
            'CompositeExplicitAutograd kernel, as torchneuron/register.h makes it (a '
            "CompositeImplicitAutograd kernel would replace the op in PyTorch's tracers): its "
            'shape library was built with an older register.h; build the bundle again with '
            'custom_op.load()') + '$')

    def test_meta_tensors(self):
        torch = self.torch
        x = torch.empty(3, 5, device='meta')
        for op, result in ((torch.ops.my_ops.relu_forward(x), (3, 5)),
                           (torch.ops.test_ops.row_sums(x), (3,)),
                           (torch.ops.test_ops.scale(x, 1, 2.0, 3), (3, 5))):
            self.assertEqual((op.device.type, op.dtype, tuple(op.shape), op.is_contiguous()),
                             ('meta', torch.float32, result, True))
        with self.assertRaises(ValueError) as caught:
            torch.ops.my_ops.relu_forward(torch.empty(3, device='meta', dtype=torch.float64))
        self.assertEqual(str(caught.exception), 'my_ops::relu_forward argument 1 (Tensor _0) '
                         'has dtype float64, which the device does not have (its dtypes: '
                         'float32, bfloat16, float16, int32, int8, int64, int16, uint8)'
                         '; convert it first, e.g. with .to(torch.float32)')

    def test_fake_tensor_mode(self):
        torch = self.torch
        from torch._subclasses import FakeTensorMode
        x = self.inputs(4, 6)
        with FakeTensorMode() as mode:
            fake = mode.from_tensor(x)
            y = torch.ops.test_ops.row_sums(torch.ops.my_ops.relu_forward(fake))
        self.assertEqual((type(y).__name__, y.device.type, y.dtype, tuple(y.shape)),
                         ('FakeTensor', 'cpu', torch.float32, (4,)))

    def check_graph(self, traced, names, check, *shapes):
        """traced, a GraphModule, calls the ops names (and no aten.empty) and
        computes check's results on new inputs of each of the sizes shapes."""
        called = called_ops(traced)
        for name in names:
            self.assertIn(name, called)
        self.assertNotIn('aten::empty.memory_format', called)
        for shape in shapes:
            x = self.inputs(*shape)
            self.assertSameBits(traced(x), check(x))

    def test_an_op_without_a_tensor_argument(self):
        """It runs on the emulated cores, also under make_fx's real tracing.
        PyTorch's FakeTensorMode takes it for a factory function (it calls
        it with device=meta), so it cannot be traced with fake tensors: an
        error, not a wrong result."""
        torch = self.torch
        from torch._subclasses import FakeTensorMode
        from torch.fx.experimental.proxy_tensor import make_fx
        iota = torch.ops.test_extra.iota
        self.assertSameBits(iota(5), torch.arange(5.0))
        traced = make_fx(lambda x: iota(4) + x)(torch.ones(4))
        self.assertIn('test_extra::iota', called_ops(traced))
        self.assertSameBits(traced(torch.full((4,), 2.0)), torch.arange(4.0) + 2)
        with FakeTensorMode():
            with self.assertRaises(RuntimeError) as caught:
                iota(6)
        self.assertEqual(str(caught.exception).split('\n')[0],
                         'test_extra::iota() expected at most 1 argument(s) but received 2 '
                         'argument(s). Declaration: test_extra::iota(int _0) -> Tensor _0')

    def test_make_fx_real_and_fake(self):
        from torch.fx.experimental.proxy_tensor import make_fx
        for mode in ('real', 'fake'):
            for name, call, check, shape in examples():
                with self.subTest(mode=mode, op=name):
                    traced = make_fx(call, tracing_mode=mode)(self.inputs(*shape))
                    self.check_graph(traced, [name], check, shape)

    def test_make_fx_symbolic(self):
        from torch.fx.experimental.proxy_tensor import make_fx
        for name, call, check, shape in examples():
            with self.subTest(op=name):
                traced = make_fx(call, tracing_mode='symbolic')(self.inputs(*shape))
                self.check_graph(traced, [name], check, shape)

    def test_make_fx_symbolic_keeps_what_the_shape_function_keeps(self):
        """test_extra::twice's shape function keeps the sizes symbolic:
        the graph then serves every size (a shape function that calls
        sizes() has them specialised to the traced ones)."""
        torch = self.torch
        from torch.fx.experimental.proxy_tensor import make_fx

        def flat_twice(x):
            y = torch.ops.test_extra.twice(x)
            return y.view(y.shape[0] * y.shape[1])

        traced = make_fx(flat_twice, tracing_mode='symbolic')(self.inputs(3, 4))
        self.assertIn('test_extra::twice', called_ops(traced))
        for shape in ((3, 4), (5, 2), (2, 9)):
            x = self.inputs(*shape)
            self.assertSameBits(traced(x), (x * 2).reshape(-1))

    def test_functionalize(self):
        from torch.fx.experimental.proxy_tensor import make_fx
        functionalize = fixture.transform('functionalize')
        for name, call, check, shape in examples():
            with self.subTest(op=name):
                eager = functionalize(call)
                x = self.inputs(*shape)
                self.assertSameBits(eager(x), check(x))
                traced = make_fx(functionalize(call))(self.inputs(*shape))
                self.check_graph(traced, [name], check, shape)

    def test_a_model_traced_whole(self):
        torch = self.torch
        from torch.fx.experimental.proxy_tensor import make_fx

        def model(x):
            h = torch.ops.my_ops.relu_forward(x @ x.t() - 1)
            h = torch.ops.test_ops.scale(h.reshape(-1), 2, 0.25, -1).reshape(h.shape)
            return torch.ops.test_ops.row_sums(h)

        def reference(x):
            return sequential_sums(torch.relu(x @ x.t() - 1) * 0.5 - 1)

        traced = make_fx(model, tracing_mode='fake')(self.inputs(5, 3))
        self.assertEqual([name for name in called_ops(traced) if '::' in name
                          and not name.startswith('aten::')],
                         ['my_ops::relu_forward', 'test_ops::scale', 'test_ops::row_sums'])
        for _ in range(3):
            x = self.inputs(5, 3)
            self.assertTrue(torch.allclose(traced(x), reference(x)))


class Torch2Test(fixture.SameBits, unittest.TestCase):
    """torch.compile, torch.export and torch.library.opcheck: PyTorch 2.x."""

    def setUp(self):
        import torch
        self.torch = torch
        torch.manual_seed(0)
        if hasattr(torch, '_dynamo'):
            torch._dynamo.reset()

    def test_pytorch_1_has_none_of_these(self):
        torch = self.torch
        if torch_major() >= 2:
            self.assertTrue(all(hasattr(torch, name) for name in ('compile', 'export')))
        else:
            self.assertFalse(any(hasattr(torch, name) for name in ('compile', 'export')))
            self.assertFalse(hasattr(torch.library, 'opcheck'))

    def test_torch_compile(self):
        torch = self.torch
        from torch._dynamo.backends.common import aot_autograd
        graphs = []

        def keep(graph_module, example_inputs):
            graphs.append(graph_module)
            return graph_module.forward

        for dynamic in (False, True):
            for backend in ('inductor', aot_autograd(fw_compiler=keep)):
                for name, call, check, shape in examples():
                    with self.subTest(dynamic=dynamic, backend=str(backend), op=name):
                        torch._dynamo.reset()
                        del graphs[:]
                        compiled = torch.compile(call, fullgraph=True, dynamic=dynamic,
                                                 backend=backend)
                        for sizes in (shape, (5, 2)[:len(shape)], shape, (7, 9)[:len(shape)]):
                            x = torch.randn(*sizes)
                            self.assertSameBits(compiled(x), check(x))
                        if backend != 'inductor':
                            self.assertTrue(graphs)
                            for graph in graphs:
                                self.assertIn(name, called_ops(graph))

    def test_torch_compile_with_dynamic_sizes(self):
        """dynamic=True compiles one graph for every size when the shape
        function keeps sizes symbolic, and one per size when it calls
        sizes()."""
        torch = self.torch
        for op, graphs_expected in ((torch.ops.test_extra.twice, 1),
                                    (torch.ops.test_ops.twice, 3)):
            with self.subTest(op=str(op)):
                torch._dynamo.reset()
                graphs = []

                def keep(graph_module, example_inputs):
                    graphs.append(graph_module)
                    return graph_module.forward

                compiled = torch.compile(lambda x: op(x).view(-1) + 1, fullgraph=True,
                                         dynamic=True, backend=keep)
                for shape in ((3, 4), (5, 2), (2, 9), (5, 2)):
                    x = torch.randn(*shape)
                    self.assertSameBits(compiled(x), (x * 2).view(-1) + 1)
                self.assertEqual(len(graphs), graphs_expected)

    def test_torch_export(self):
        torch = self.torch
        for name, call, check, shape in examples():
            with self.subTest(op=name):
                class Model(torch.nn.Module):
                    def forward(self, x):
                        return call(x)

                exported = torch.export.export(Model(), (torch.randn(*shape),))
                self.assertIn(name, called_ops(exported.graph_module))
                decomposed = exported.run_decompositions()
                self.assertIn(name, called_ops(decomposed.graph_module))
                for program in (exported, decomposed):
                    x = torch.randn(*shape)
                    self.assertSameBits(program.module()(x), check(x))

    def test_torch_export_of_a_model_with_parameters(self):
        """Parameters require grad: export's trace runs the op on inputs
        that require grad, and no backward."""
        torch = self.torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 3)

            def forward(self, x):
                return torch.ops.my_ops.relu_forward(self.linear(x))

        model = Model()
        exported = torch.export.export(model, (torch.randn(2, 4),)).run_decompositions()
        self.assertIn('my_ops::relu_forward', called_ops(exported.graph_module))
        x = torch.randn(2, 4)   # export specialises the sizes
        with torch.no_grad():
            self.assertSameBits(exported.module()(x), torch.relu(model.linear(x)))

    def test_opcheck(self):
        torch = self.torch
        x = torch.randn(3, 4)
        cases = [
            (torch.ops.my_ops.relu_forward.default, (x,)),
            (torch.ops.my_ops.relu_backward.default, (torch.randn(3, 4), x)),
            (torch.ops.test_ops.scale.default, (torch.randn(7), 2, 0.5, 3)),
            (torch.ops.test_ops.row_sums.default, (x,)),
            (torch.ops.test_ops.fault.default, (x, 0)),
            (torch.ops.test_ops.twice.default, (x,)),
            (torch.ops.test_more.negate.default, (x,)),
            (getattr(torch.ops.test_more, fixture.LONG_OP).default, (x,)),
            (torch.ops.test_extra.twice.default, (x,)),
        ]
        for op, arguments in cases:
            with self.subTest(op=str(op)):
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    results = torch.library.opcheck(op, arguments)
                self.assertEqual(results, {'test_schema': 'SUCCESS',
                                           'test_autograd_registration': 'SUCCESS',
                                           'test_faketensor': 'SUCCESS',
                                           'test_aot_dispatch_dynamic': 'SUCCESS'})


def torch_2_or_unknown():
    """Whether the PyTorch here is 2.x, or none is importable here (the
    tests then run again under an interpreter that has one)."""
    try:
        import torch
    except ImportError:
        return True
    return int(torch.__version__.split('.')[0]) >= 2


if not torch_2_or_unknown():
    # What PyTorch 1.13 does not have: test_pytorch_1_has_none_of_these checks that.
    for name in ('test_torch_compile', 'test_torch_compile_with_dynamic_sizes',
                 'test_torch_export', 'test_torch_export_of_a_model_with_parameters',
                 'test_opcheck'):
        delattr(Torch2Test, name)

if __name__ == '__main__':
    tap.main(needs_torch=True)
