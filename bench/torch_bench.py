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
    lines.append(f'**MLP training** (examples/mlp: 784-120-84-10, batch 32, SGD, {steps} '
                 'steps, one PyTorch thread; relu_forward and relu_backward as custom ops)')
    lines.append('')
    lines.append('| relu | steps/s | time of torch.relu\'s loop | per step: kernels on the '
                 'emulator | shape functions | checks and dispatch | the rest (PyTorch) |')
    lines.append('|---|---|---|---|---|---|---|')
    reference = Model(torch.relu)
    train.train(reference, data[:2])   # warm up
    seconds = min(train.train(Model(torch.relu), data)[1] for _ in range(1 if QUICK else 3))
    reference_rate = steps / seconds
    lines.append(f'| torch.relu | {reference_rate:.1f} | 1 | - | - | - | '
                 f'{1000 * seconds / steps:.2f} ms |')
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
        model = Model(my_ops.Relu.apply)
        train.train(model, data[:2])
        for timer in kernels, *shapes, *calls:
            timer.seconds, timer.calls = 0.0, 0
        _, seconds = train.train(model, data)
        in_ops = sum(timer.seconds for timer in calls)
        in_shapes = sum(timer.seconds for timer in shapes)
        per = 1000 / steps
        lines.append(
            f'| {variant} | {steps / seconds:.1f} | {seconds * reference_rate / steps:.1f}x | '
            f'{kernels.seconds * per:.2f} ms ({kernels.calls // steps} runs) | '
            f'{in_shapes * per:.2f} ms | {(in_ops - kernels.seconds - in_shapes) * per:.2f} ms | '
            f'{(seconds - in_ops) * per:.2f} ms |')
        library.library.run = kernels.function
    lines.append('')
    # The cost of one call apart from the kernel's work: a 1-element tensor.
    one = torch.ones(1, 1)
    forward = torch.ops.my_ops.relu_forward
    count = 20 if QUICK else 200
    start = time.perf_counter()
    for _ in range(count):
        forward(one)
    per_call = (time.perf_counter() - start) / count
    start = time.perf_counter()
    for _ in range(count):
        torch.relu(one)
    torch_call = (time.perf_counter() - start) / count
    lines.append(f'One call of relu_forward (multicore) on a 1-element tensor: '
                 f'{per_call * 1e6:.0f} us, against {torch_call * 1e6:.1f} us for torch.relu.')
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


def machine():
    cpu = 'unknown CPU'
    try:
        with open('/proc/cpuinfo') as stream:
            for line in stream:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f'{cpu}, nproc {os.cpu_count()}, {os.uname().release}'


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
