"""compile.py - PyTorch 2.x: the MLP with the relu ops compiled by
torch.compile and exported by torch.export.  relu_forward gets its
backward from torch.library.register_autograd (no torch.autograd.Function
around it), the model is compiled whole (fullgraph=True) and trained a few
steps beside the same model with torch.relu, compiled too, from the same
initial weights on the same batches; every parameter must end equal bit
for bit.  Then the model is exported, and the exported program must
compute what the model does.  Exit status 0 when all holds, 1 if not, 2
on PyTorch 1.x (which has neither: train.py shows its way,
torch.autograd.Function).

    python3 compile.py BUNDLE [--steps N] [--batch B] [--dynamic]

BUNDLE is the librelu.so that build.py wrote.
"""
import argparse
import sys

import torch

import my_ops
from model import MLP
from train import batches, same_bits, train


def relu_backward(ctx, grad):
    x, = ctx.saved_tensors
    return torch.ops.my_ops.relu_backward(grad, x)


def keep_input(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bundle')
    parser.add_argument('--steps', type=int, default=3)
    parser.add_argument('--batch', type=int, default=32)
    parser.add_argument('--dynamic', action='store_true',
                        help='compile with dynamic=True (and vary the batch size)')
    options = parser.parse_args(argv)
    if not hasattr(torch, 'compile') or not hasattr(torch.library, 'register_autograd'):
        print(f'compile.py needs PyTorch 2.4 or later (this is {torch.__version__}); on '
              'PyTorch 1.x, train.py calls the ops in a torch.autograd.Function',
              file=sys.stderr)
        return 2

    my_ops.load(options.bundle)
    torch.library.register_autograd('my_ops::relu_forward', relu_backward,
                                    setup_context=keep_input)
    torch.manual_seed(0)
    custom = MLP(torch.ops.my_ops.relu_forward)
    reference = MLP(torch.relu)
    reference.load_state_dict(custom.state_dict())
    data = batches(options.steps, options.batch)
    if options.dynamic:   # a batch one smaller each step
        data = [(inputs[:options.batch - i], labels[:options.batch - i])
                for i, (inputs, labels) in enumerate(data)]

    compile_options = dict(fullgraph=True, dynamic=options.dynamic)
    custom_losses, _ = train(torch.compile(custom, **compile_options), data)
    reference_losses, _ = train(torch.compile(reference, **compile_options), data)
    for step, (ours, theirs) in enumerate(zip(custom_losses, reference_losses), 1):
        print(f'step {step}: loss {ours!r} compiled with the custom relu, {theirs!r} with '
              'torch.relu')
    differing = [name for (name, ours), (_, theirs) in
                 zip(custom.named_parameters(), reference.named_parameters())
                 if not same_bits(ours, theirs)]
    if differing:
        print(f"FAILED: these parameters differ from torch.relu's: {', '.join(differing)}")
        return 1
    print("compiled: every parameter equals torch.relu's, bit for bit")

    inputs = data[0][0]
    exported = torch.export.export(custom, (inputs,)).run_decompositions()
    calls = [node.target for node in exported.graph.nodes if node.op == 'call_function']
    if torch.ops.my_ops.relu_forward.default not in calls:
        print('FAILED: the exported program does not call my_ops::relu_forward')
        return 1
    with torch.no_grad():
        if not same_bits(exported.module()(inputs), custom(inputs)):
            print('FAILED: the exported program computes something else than the model')
            return 1
    print('exported: the program calls my_ops::relu_forward and computes what the model does')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
