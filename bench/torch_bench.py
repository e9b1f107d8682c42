#!/usr/bin/env python3
"""torch_bench.py - the PyTorch-level benchmarks (make bench-torch, and part
of make bench; see bench/README.md).  Needs PyTorch: it runs itself under
an interpreter that can import it.

  - MLP training: the loop of examples/mlp with the relu as custom ops on
     the emulated cores (each kernel variant) against the same loop with
     torch.relu, in steps per second, and where a step's time goes;
  - load() with the shape library in the cache against an empty cache,
     nothing else changed, each in a fresh process.

Usage: bench/torch_bench.py [--quick] [--record]
  --quick   fewer steps and repetitions (a smoke run)
  --record  also replace the PyTorch section of the results in bench/README.md
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLP = os.path.join(TOP, 'examples', 'mlp')
README = os.path.join(TOP, 'bench', 'README.md')
WORK = os.path.join(TOP, 'obj', 'bench-torch')
QUICK = '--quick' in sys.argv
TORCH_INTERPRETERS = ('/usr/bin/python3', 'python3')
BEGIN, END = '<!-- torch results: begin -->', '<!-- torch results: end -->'

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import machine  # noqa: E402  (bench.py: the other cases)


def ensure_torch():
    try:
        import torch  # noqa: F401
        return
    except ImportError:
        pass
    for candidate in TORCH_INTERPRETERS:
        path = shutil.which(candidate)
        if path and os.path.realpath(path) != os.path.realpath(sys.executable) and \
                subprocess.run([path, '-c', 'import torch'], stderr=subprocess.DEVNULL).returncode == 0:
            os.execv(path, [path] + sys.argv)
    sys.exit('torch_bench: needs PyTorch: apt-get install python3-torch pybind11-dev ninja-build')


class Timer:
    """Adds up the time spent in calls of a function."""

    def __init__(self, function):
        self.function = function
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


class PythonRelu:
    """torch.relu and its gradient in a torch.autograd.Function written as
    examples/mlp's my_ops.Relu is: what the Function itself costs."""

    def __new__(cls):
        import torch

        class Relu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.relu(x)

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return torch.where(x > 0, grad, torch.zeros_like(grad))

        return Relu


def best_run(model, data, train, timers=()):
    """The fastest of the loop's runs (after a warm-up), with the timers'
    totals of that run."""
    train.train(model, data[:2])
    best = None
    for _ in range(1 if QUICK else 3):
        for timer in timers:
            timer.seconds, timer.calls = 0.0, 0
        seconds = train.train(model, data)[1]
        if best is None or seconds < best[0]:
            best = (seconds, [(timer.seconds, timer.calls) for timer in timers])
    return best


def mlp_case(lines):
    import torch
    sys.path.insert(0, MLP)
    import build
    import my_ops
    import train
    from model import MLP as Model
    torch.manual_seed(0)
    torch.set_num_threads(1)
    steps = 5 if QUICK else 40
    data = train.batches(steps, 32)
    per = 1000 / steps
    lines.append(f'**MLP training** (examples/mlp: 784-120-84-10, batch 32, SGD, {steps} '
                 'steps, one PyTorch thread; relu_forward and relu_backward as custom ops; '
                 f'the fastest of {1 if QUICK else 3} runs)')
    lines.append('')
    lines.append('| relu | steps/s | time against torch.relu | per step: kernels on the '
                 'emulator | shape functions | checks and dispatch | the rest (PyTorch) |')
    lines.append('|---|---|---|---|---|---|---|')
    seconds, _ = best_run(Model(torch.relu), data, train)
    reference_rate = steps / seconds
    lines.append(f'| torch.relu | {reference_rate:.1f} | 1 | - | - | - | '
                 f'{seconds * per:.2f} ms |')
    seconds, _ = best_run(Model(PythonRelu().apply), data, train)
    lines.append(f'| torch.relu in an autograd.Function | {steps / seconds:.1f} | '
                 f'{seconds * reference_rate / steps:.2f}x | - | - | - | {seconds * per:.2f} ms |')
    for variant in ('element', 'tcm', 'multicore'):
        bundle = build.build(variant, os.path.join(WORK, f'mlp-{variant}'))
        my_ops.load(bundle)
        forward = torch.ops.my_ops.relu_forward
        backward = torch.ops.my_ops.relu_backward
        library = forward.library
        kernels = Timer(library.library.run)
        library.library.run = kernels
        shapes = [Timer(forward.shape_function), Timer(backward.shape_function)]
        forward.shape_function, backward.shape_function = shapes
        calls = [Timer(forward), Timer(backward)]
        torch.ops.my_ops.relu_forward, torch.ops.my_ops.relu_backward = calls
        seconds, totals = best_run(Model(my_ops.Relu.apply), data, train,
                                   [kernels, *shapes, *calls])
        (in_kernels, runs), forward_shapes, backward_shapes, forward_calls, backward_calls = \
            totals
        in_shapes = forward_shapes[0] + backward_shapes[0]
        in_ops = forward_calls[0] + backward_calls[0]
        lines.append(
            f'| {variant} | {steps / seconds:.1f} | {seconds * reference_rate / steps:.2f}x | '
            f'{in_kernels * per:.2f} ms ({runs // steps} runs) | {in_shapes * per:.2f} ms | '
            f'{(in_ops - in_kernels - in_shapes) * per:.2f} ms | '
            f'{(seconds - in_ops) * per:.2f} ms |')
        library.library.run = kernels.function
        forward.shape_function, backward.shape_function = (timer.function for timer in shapes)
        torch.ops.my_ops.relu_forward, torch.ops.my_ops.relu_backward = forward, backward
    lines.append('')
    # The fixed cost of a call: a 1-element tensor, split as above.
    one = torch.ones(1, 1)
    count = 20 if QUICK else 500
    shape = Timer(forward.shape_function)
    kernels = Timer(forward.library.library.run)
    forward.shape_function, forward.library.library.run = shape, kernels
    start = time.perf_counter()
    for _ in range(count):
        forward(one)
    per_call = (time.perf_counter() - start) / count
    forward.shape_function, forward.library.library.run = shape.function, kernels.function
    start = time.perf_counter()
    for _ in range(count):
        torch.relu(one)
    torch_call = (time.perf_counter() - start) / count
    lines.append(f'One call of relu_forward (multicore) on a 1-element tensor: '
                 f'{per_call * 1e6:.0f} us (the runner {kernels.seconds / count * 1e6:.0f} us, '
                 f'the shape function {shape.seconds / count * 1e6:.0f} us, the rest '
                 f'{(per_call - (kernels.seconds + shape.seconds) / count) * 1e6:.0f} us), '
                 f'against {torch_call * 1e6:.1f} us for torch.relu.')
    lines.append('')


def load_case(lines):
    """build.py in a fresh process, with an empty shape-library cache and
    then with a warm one."""
    cache = tempfile.mkdtemp(prefix='cache.', dir=WORK)
    environment = dict(os.environ, BUILD_CUSTOM_OP_CACHE=cache,
                       BUILD_CUSTOM_OP_BUNDLES=os.path.join(WORK, 'bundles'))
    script = ('import sys, time\n'
              'start = time.perf_counter()\n'
              'import torch\n'
              'imported = time.perf_counter()\n'
              f'sys.path.insert(0, {MLP!r})\n'
              'import build\n'
              f"build.build('element', {os.path.join(WORK, 'load')!r})\n"
              'print(imported - start, time.perf_counter() - imported)\n')

    def run():
        start = time.perf_counter()
        done = subprocess.run([sys.executable, '-c', script], env=environment,
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f'torch_bench: load() failed:\n{done.stderr}')
        total = time.perf_counter() - start
        imported, loading = (float(value) for value in done.stdout.split())
        return total, imported, loading

    cold = run()
    warm = [run() for _ in range(1 if QUICK else 5)]
    warm_total = statistics.median(run[0] for run in warm)
    warm_import = statistics.median(run[1] for run in warm)
    warm_load = statistics.median(run[2] for run in warm)
    shutil.rmtree(cache, ignore_errors=True)
    lines.append('**load(), nothing changed** (examples/mlp, element variant, target '
                 "'host': a fresh process running build.py; the shape library from an empty "
                 f'cache, then from the warm one, median of {len(warm)})')
    lines.append('')
    lines.append('| cache | process | import torch | load() |')
    lines.append('|---|---|---|---|')
    lines.append(f'| empty | {cold[0]:.2f} s | {cold[1]:.2f} s | {cold[2]:.2f} s |')
    lines.append(f'| warm | {warm_total:.2f} s | {warm_import:.2f} s | {warm_load:.2f} s |')
    lines.append('')
    lines.append(f'load() with a warm cache takes {warm_load / cold[2]:.3f} of the cold one '
                 f'({cold[2] / warm_load:.0f}x faster).')
    lines.append('')


def main():
    ensure_torch()
    import torch
    os.makedirs(WORK, exist_ok=True)
    lines = [f'Measured {time.strftime("%Y-%m-%d")} on: {machine()}; PyTorch {torch.__version__}.',
             '']
    mlp_case(lines)
    load_case(lines)
    text = '\n'.join(lines)
    print(text)
    with open(os.path.join(WORK, 'results.md'), 'w') as stream:
        stream.write(text + '\n')
    if '--record' in sys.argv:
        with open(README) as stream:
            readme = stream.read()
        pattern = re.compile(re.escape(BEGIN) + '.*' + re.escape(END), re.S)
        if not pattern.search(readme):
            sys.exit(f'torch_bench: {README} has no {BEGIN} ... {END} section')
        readme = pattern.sub(lambda _: f'{BEGIN}\n{text}\n{END}', readme)
        with open(README, 'w') as stream:
            stream.write(readme)


if __name__ == '__main__':
    main()
