"""test_autograd_modes.py - no autograd mode goes through a host op
silently: reverse mode (requires_grad, torch.func's grad, vjp and jacrev)
and forward mode (torch.autograd.forward_ad's dual tensors, jvp and jacfwd,
also under torch.no_grad(), which does not stop forward mode) raise an
error that names the op; vmap runs the op once per sample; a
torch.autograd.Function over host ops gives both derivatives; and on
PyTorch 2.x, torch.library.register_autograd gives an op the user's
backward, while forward mode through it is still refused."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402


def setUpModule():
    work = fixture.enter_work_directory('bco-autograd-test.')
    fixture.load_examples_for_the_host(work)


def tearDownModule():
    fixture.leave_work_directory()


class AutogradModesTest(fixture.SameBits, unittest.TestCase):
    def setUp(self):
        import torch
        self.torch = torch
        torch.manual_seed(0)

    def assertRefused(self, call, message):
        with self.assertRaises(RuntimeError) as caught:
            call()
        self.assertEqual(str(caught.exception).split('\n')[0], message)

    def test_reverse_mode(self):
        """A call on an input that requires grad runs; a backward through
        it raises."""
        torch = self.torch
        x = torch.randn(2, 3).requires_grad_()
        twice = torch.ops.test_ops.twice
        self.assertRefused(lambda: twice(x).sum().backward(),
                           fixture.reverse_refusal('test_ops::twice'))
        self.assertRefused(lambda: torch.autograd.grad(twice(x).sum(), x),
                           fixture.reverse_refusal('test_ops::twice'))
        y = torch.ops.my_ops.relu_backward(torch.ones(2, 3), x)
        self.assertRefused(lambda: y.sum().backward(),
                           fixture.reverse_refusal('my_ops::relu_backward', 2))
        # A backward that does not reach the op runs.
        w = torch.ones(3).requires_grad_()
        (torch.ops.test_ops.twice(x[0]) * w).sum().backward(inputs=[w])
        self.assertSameBits(w.grad, x[0].detach() * 2)
        with torch.no_grad():
            y = twice(x)
        self.assertSameBits(y, x.detach() * 2)
        self.assertFalse(y.requires_grad)

    def test_forward_mode(self):
        torch = self.torch
        import torch.autograd.forward_ad as fwAD
        x = torch.randn(2, 3)
        twice = torch.ops.test_ops.twice
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, torch.ones(2, 3))
            self.assertRefused(lambda: twice(dual), fixture.forward_refusal('test_ops::twice'))
            with torch.no_grad():   # which does not stop forward mode
                self.assertRefused(lambda: twice(dual), fixture.forward_refusal('test_ops::twice'))
            self.assertRefused(lambda: torch.ops.test_ops.scale(dual, 1, 2.0, 3),
                               fixture.forward_refusal('test_ops::scale'))
            self.assertRefused(lambda: torch.ops.my_ops.relu_backward(x, dual * 2),
                               fixture.forward_refusal('my_ops::relu_backward', 2))
            # The primal alone goes through.
            self.assertSameBits(twice(fwAD.unpack_dual(dual).primal), x * 2)

    def test_torch_func_transforms(self):
        torch = self.torch
        x = torch.randn(2, 3)
        relu = torch.ops.my_ops.relu_forward
        cases = [
            ('jvp', lambda: fixture.transform('jvp')(relu, (x,), (torch.ones(2, 3),)), 'forward'),
            ('jacfwd', lambda: fixture.transform('jacfwd')(relu)(x), 'forward'),
            ('jacrev', lambda: fixture.transform('jacrev')(relu)(x), 'reverse'),
            ('grad', lambda: fixture.transform('grad')(lambda t: relu(t).sum())(x), 'reverse'),
            ('vjp', lambda: fixture.transform('vjp')(relu, x)[1](torch.ones(2, 3)), 'reverse'),
            # jacfwd over jacrev: the op sees the tangent in the forward pass.
            ('hessian', lambda: fixture.transform('hessian')(lambda t: relu(t).sum())(x),
             'forward'),
        ]
        for name, call, mode in cases:
            with self.subTest(transform=name):
                refusal = fixture.forward_refusal if mode == 'forward' else fixture.reverse_refusal
                self.assertRefused(call, refusal('my_ops::relu_forward'))

    def test_vmap_runs_the_op_per_sample(self):
        torch = self.torch
        x = torch.randn(4, 3, 5)
        vmap = fixture.transform('vmap')
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')   # no batching rule: a loop over the samples
            self.assertSameBits(vmap(torch.ops.my_ops.relu_forward)(x), torch.relu(x))
            self.assertSameBits(vmap(torch.ops.test_ops.row_sums)(x),
                                torch.stack([torch.ops.test_ops.row_sums(t) for t in x]))

    def test_an_autograd_function_gives_both_derivatives(self):
        torch = self.torch
        import torch.autograd.forward_ad as fwAD
        ops = torch.ops.my_ops

        class Relu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                return ops.relu_forward(x)

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return ops.relu_backward(grad, x)

            @staticmethod
            def jvp(ctx, tangent):
                x, = ctx.saved_tensors
                return ops.relu_backward(tangent, x)

        x = torch.randn(3, 4)
        tangent = torch.randn(3, 4)
        with fwAD.dual_level():
            ours = fwAD.unpack_dual(Relu.apply(fwAD.make_dual(x, tangent))).tangent
            theirs = fwAD.unpack_dual(torch.relu(fwAD.make_dual(x, tangent))).tangent
        self.assertSameBits(ours, theirs)
        mine = x.clone().requires_grad_()
        reference = x.clone().requires_grad_()
        (Relu.apply(mine) * tangent).sum().backward()
        (torch.relu(reference) * tangent).sum().backward()
        self.assertSameBits(mine.grad, reference.grad)


class RegisterAutogradTest(fixture.SameBits, unittest.TestCase):
    """torch.library.register_autograd (PyTorch 2.4 and later) on a host op:
    test_more::negate, which no other test here differentiates."""

    def setUp(self):
        import torch
        self.torch = torch

    def test_pytorch_1_has_no_register_autograd(self):
        torch = self.torch
        self.assertEqual(hasattr(torch.library, 'register_autograd'),
                         fixture.torch_version() >= (2, 4))

    def test_register_autograd(self):
        torch = self.torch
        import torch.autograd.forward_ad as fwAD
        negate = torch.ops.test_more.negate
        called = []

        def backward(ctx, grad):
            called.append(tuple(grad.shape))
            return negate(grad)

        torch.library.register_autograd('test_more::negate', backward)
        x = torch.randn(3, 4).requires_grad_()
        weights = torch.randn(3, 4)
        (negate(x) * weights).sum().backward()
        self.assertTrue(torch.equal(x.grad, -weights))
        self.assertEqual(called, [(3, 4)])
        # torch.func's transforms refuse the autograd.Function that
        # register_autograd makes for an op that torch.library.custom_op did
        # not define (PyTorch's own error).
        with self.assertRaisesRegex(RuntimeError, 'functorch transforms'):
            fixture.transform('grad')(lambda t: (negate(t) * weights).sum())(x.detach())
        torch.library.opcheck(torch.ops.test_more.negate.default, (x,))
        # Forward mode still has no derivative.
        with fwAD.dual_level():
            dual = fwAD.make_dual(x.detach(), torch.ones(3, 4))
            with self.assertRaises(RuntimeError) as caught:
                negate(dual)
            self.assertEqual(str(caught.exception).split('\n')[0],
                             fixture.forward_refusal('test_more::negate'))
        with self.assertRaises(RuntimeError) as caught:
            fixture.transform('jvp')(negate, (x.detach(),), (torch.ones(3, 4),))
        self.assertEqual(str(caught.exception).split('\n')[0],
                         fixture.forward_refusal('test_more::negate'))


def has_register_autograd():
    """Whether torch.library has register_autograd (or no PyTorch is
    importable here: the tests then run again under one that is)."""
    try:
        import torch
    except ImportError:
        return True
    return hasattr(torch.library, 'register_autograd')


if not has_register_autograd():
    # test_pytorch_1_has_no_register_autograd checks that it is missing.
    del RegisterAutogradTest.test_register_autograd

if __name__ == '__main__':
    tap.main(needs_torch=True)
