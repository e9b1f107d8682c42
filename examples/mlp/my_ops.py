"""my_ops.py - the relu of the MLP as custom ops: the bundle's ops
registered with load_library(), wired into autograd by a Function."""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python'))
from build_custom_op import custom_op  # noqa: E402


def load(bundle):
    """Registers torch.ops.my_ops.relu_forward and relu_backward."""
    custom_op.load_library(bundle, target='host')


class Relu(torch.autograd.Function):
    """relu whose forward and backward both run as custom ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.ops.my_ops.relu_forward(x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return torch.ops.my_ops.relu_backward(grad, x)
