"""train.py - trains the MLP a few steps on CPU twice, once with the relu
as custom ops on the emulated GPSIMD cores and once with torch.relu, from
the same initial weights on the same batches, and checks that every
parameter ends equal bit for bit.  Exit status 0 when they do, 1 if not.

    python3 train.py BUNDLE [--steps N] [--batch B]

BUNDLE is the librelu.so that build.py wrote.
"""
import argparse
import sys
import time

import torch

import my_ops
from model import MLP


def batches(count, batch, seed=1):
    """Random MNIST-shaped batches: 784 features in [0, 1), labels 0-9."""
    generator = torch.Generator().manual_seed(seed)
    return [(torch.rand(batch, 28 * 28, generator=generator),
             torch.randint(0, 10, (batch,), generator=generator)) for _ in range(count)]


def train(model, data, learning_rate=0.01):
    """SGD over data; returns the loss of each step and the seconds taken."""
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    losses = []
    start = time.perf_counter()
    for inputs, labels in data:
        optimizer.zero_grad()
        loss = torch.nn.functional.nll_loss(model(inputs), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, time.perf_counter() - start


def same_bits(a, b):
    return a.shape == b.shape and torch.equal(a.detach().view(torch.int32),
                                              b.detach().view(torch.int32))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bundle')
    parser.add_argument('--steps', type=int, default=5)
    parser.add_argument('--batch', type=int, default=32)
    options = parser.parse_args(argv)

    my_ops.load(options.bundle)
    torch.manual_seed(0)
    custom = MLP(my_ops.Relu.apply)
    reference = MLP(torch.relu)
    reference.load_state_dict(custom.state_dict())
    data = batches(options.steps, options.batch)

    custom_losses, custom_seconds = train(custom, data)
    reference_losses, reference_seconds = train(reference, data)
    for step, (a, b) in enumerate(zip(custom_losses, reference_losses), 1):
        print(f'step {step}: loss {a:.6f} with the custom relu, {b:.6f} with torch.relu')
    print(f'{options.steps} steps: {options.steps / custom_seconds:.1f} steps/s with the '
          f'custom relu, {options.steps / reference_seconds:.1f} steps/s with torch.relu')

    parameters = dict(reference.named_parameters())
    differ = [name for name, value in custom.named_parameters()
              if not same_bits(value, parameters[name])]
    count = sum(value.numel() for value in custom.parameters())
    if differ:
        print(f'FAILED: these parameters differ from torch.relu\'s: {", ".join(differ)}')
        return 1
    print(f'every parameter ({len(parameters)} tensors, {count} values) equals '
          'torch.relu\'s, bit for bit')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
