"""build_custom_op.testing - tests for host ops beyond the one example a
user has at hand.

``sweep(op, reference, *example_args)`` runs a host op (a
``torch.ops.<ns>.<op>`` registered by ``custom_op.load(..., target='host')``
or ``load_library``) on shapes derived from the example's, compares each
result with ``reference(*args)`` and reports what failed::

    from build_custom_op import testing
    result = testing.sweep(torch.ops.my_ops.softmax_t,
                           lambda x, t: torch.softmax(x / t, dim=1),
                           torch.randn(32, 1024), 0.5)
    assert result, str(result)

Each case changes one dimension of the example's tensors (tied dimensions
change together, see ``sweep``) and keeps the rest: small sizes, sizes
around the core count and its multiples, sizes around the powers of two up
to just past the example's size, and zero.  A kernel that gives each core
``rows // 8`` rows, or that drops the last partial chunk of a row, passes on
a 32 x 1024 example and fails here.

Imports torch.
"""

import math
import time
import warnings

import torch

from build_custom_op import runner

__all__ = ['sweep', 'SweepResult', 'SweepFailure', 'sizes_around']

# What the runner reads to decide whether elements no core wrote fail the
# call (run-custom-op(1), OUTPUT CHECKS).
_OUTPUT_CHECKS_VARIABLE = 'BUILD_CUSTOM_OP_OUTPUT_CHECKS'
# Lines of failures str() shows.
_SHOWN = 5


def sizes_around(example, cores=8, zero=True):
    """The sizes a sweep gives a dimension whose example size is example:
    0 (when zero), 1 to 3; the first four multiples of cores, and those
    just below and above example, with the sizes beside each; each power of
    two up to the first one at least example, with the sizes beside it;
    example and the sizes beside it.  Sorted, without repeats."""
    sizes = {1, 2, 3, example - 1, example, example + 1}
    if zero:
        sizes.add(0)
    if cores > 1:
        multiples = {cores * k for k in range(1, 5)}
        below = example // cores * cores
        if below > 0:
            multiples.update((below, below + cores))
        for multiple in multiples:
            sizes.update((multiple - 1, multiple, multiple + 1))
    power = 2
    while True:
        sizes.update((power - 1, power, power + 1))
        if power >= example:
            break
        power *= 2
    return sorted(size for size in sizes if size >= (0 if zero else 1))


class SweepFailure:
    """One failed case: shapes (the tensor arguments' shapes, as tuples, in
    argument order) and message (the op's error, or the first element that
    differs from the reference)."""

    def __init__(self, shapes, message):
        self.shapes = shapes
        self.message = message

    def __repr__(self):
        return f'SweepFailure(shapes={self.shapes!r}, message={self.message!r})'


class SweepResult:
    """What a sweep found: true when a case ran and every case passed (a
    sweep whose reference refused every shape tested nothing, and is
    false).  failures (a list of
    SweepFailure, the smallest case first), cases (the shapes run, as lists
    of tuples), skipped (shapes the reference itself refused, with its
    message), seconds (the sweep's wall time), op (the op's name).  str()
    is a short report."""

    def __init__(self, op, cases, failures, skipped, seconds, notes):
        self.op = op
        self.cases = cases
        self.failures = failures
        self.skipped = skipped
        self.seconds = seconds
        self.notes = notes

    def __bool__(self):
        return bool(self.cases) and not self.failures

    def __str__(self):
        lines = [f'sweep of {self.op}: {len(self.cases)} shapes in {self.seconds:.1f} s, '
                 f'{len(self.failures)} failed' +
                 (f', {len(self.skipped)} refused by the reference' if self.skipped else '')]
        lines += [f'note: {note}' for note in self.notes]
        if not self.cases and self.skipped:
            shapes, message = self.skipped[0]
            lines.append('nothing was tested: the reference refused every shape, the first '
                         f'{_shapes_text(shapes)} with {message}; '
                         "make the reference take the example's arguments")
        if self.failures:
            lines.append('failures, smallest first:')
        for failure in self.failures[:_SHOWN]:
            shapes = _shapes_text(failure.shapes)
            first_line = failure.message.split('\n', 1)[0]
            more = failure.message.count('\n')
            lines.append(f'  {shapes}: {first_line}' +
                         (f' (and {more} more line{"s" if more > 1 else ""})' if more else ''))
        if len(self.failures) > _SHOWN:
            lines.append(f'  ... and {len(self.failures) - _SHOWN} more (see .failures)')
        return '\n'.join(lines)

    def __repr__(self):
        return (f'<SweepResult of {self.op}: {len(self.cases)} shapes, '
                f'{len(self.failures)} failed>')


def _shapes_text(shapes):
    """A case's tensor shapes as the report writes them: "(2, 3), (3,)"."""
    return ', '.join(_shape_text(shape) for shape in shapes)


def _shape_text(shape):
    return '(' + ', '.join(str(size) for size in shape) + (',)' if len(shape) == 1 else ')')


def _name_of(op):
    for attribute in ('_qualified_op_name', '__qualname__', '__name__'):
        name = getattr(op, attribute, None)
        if isinstance(name, str):
            return name
    return repr(op)


def _new_tensor(like, shape, generator):
    """A tensor of shape with like's dtype and reproducible values: normal
    for floating dtypes, small integers otherwise."""
    if like.dtype.is_floating_point:
        values = torch.randn(shape, generator=generator, dtype=torch.float64)
        return values.to(like.dtype)
    if like.dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).to(torch.bool)
    low = 0 if like.dtype == torch.uint8 else -8
    return torch.randint(low, 9, shape, generator=generator, dtype=torch.int64).to(like.dtype)


def _cases(tensors, cores, zero, tie):
    """The shapes of each case: one list of shapes (one per tensor argument)
    per case, the example's first."""
    example = [tuple(tensor.shape) for tensor in tensors]
    cases = [example]
    seen = {tuple(example)}
    for index, shape in enumerate(example):
        for dim, size in enumerate(shape):
            # Tied: the same dimension of every tensor that has the same
            # size there (x and y of an element-wise op).
            tied = [(i, dim) for i, other in enumerate(example)
                    if tie and len(other) > dim and other[dim] == size] or [(index, dim)]
            if tied[0] != (index, dim) and tie:
                continue   # swept with the first tensor of the tie
            for new_size in sizes_around(size, cores, zero):
                shapes = [list(s) for s in example]
                for i, d in tied:
                    shapes[i][d] = new_size
                case = [tuple(s) for s in shapes]
                if tuple(case) not in seen:
                    seen.add(tuple(case))
                    cases.append(case)
    return cases


def _first_difference(result, expected, rtol, atol):
    """None when result matches expected, else what differs first."""
    if not isinstance(result, torch.Tensor):
        return f'the op returned {type(result).__name__}, not a tensor'
    if tuple(result.shape) != tuple(expected.shape):
        return (f'the output has shape {_shape_text(tuple(result.shape))}, the reference '
                f'{_shape_text(tuple(expected.shape))}')
    if result.dtype != expected.dtype:
        return f'the output has dtype {result.dtype}, the reference {expected.dtype}'
    if result.numel() == 0:
        return None
    if expected.dtype.is_floating_point:
        got, want = result.double(), expected.double()
        bad = ~(((got - want).abs() <= atol + rtol * want.abs()) |
                (torch.isnan(got) & torch.isnan(want)))
    else:
        got, want = result, expected
        bad = got != want
    count = int(bad.sum())
    if count == 0:
        return None
    flat = int(torch.nonzero(bad.reshape(-1))[0])
    position = tuple(int(i) for i in _unravel(flat, tuple(result.shape)))
    others = f' (and {count - 1} other element{"s" if count > 2 else ""})' if count > 1 else ''
    return (f'element {_shape_text(position)} is {result.reshape(-1)[flat].item()!r} where the '
            f'reference has {expected.reshape(-1)[flat].item()!r}{others}')


def _unravel(flat, shape):
    position = []
    for size in reversed(shape):
        position.append(flat % size)
        flat //= size
    return reversed(position)


def sweep(op, reference, *example_args, cores=8, zero=True, tie=True, rtol=1e-5, atol=1e-6,
          seed=0):
    """Runs op on shapes derived from example_args and compares each result
    with reference(*args); returns a SweepResult (false when a case failed).

    example_args: the op's arguments; each tensor among them is swept (the
    others are passed as they are).  A case changes one dimension of one
    tensor to each size of sizes_around(its size, cores, zero), and keeps
    the other dimensions; with tie, the same dimension of the other
    tensors that have the same size there changes with it.  Each case gets
    new inputs of the example's dtypes (seeded by seed).  A case whose
    reference raises is skipped (the shape is not one the op takes: zero,
    say); a case fails when the op raises (the emulator's error: a fault,
    a broken device rule, output elements no core wrote, ...) or its
    result differs from the reference's: shape, dtype, or an element beyond
    atol + rtol * |reference| (integers exactly).

    The output checks are those of the process: on (errors) unless
    $BUILD_CUSTOM_OP_OUTPUT_CHECKS said otherwise when the op was
    registered; the result notes it when they are off."""
    started = time.monotonic()
    positions = [i for i, argument in enumerate(example_args)
                 if isinstance(argument, torch.Tensor)]
    tensors = [example_args[i] for i in positions]
    notes = []
    checks = runner._output_checks_from_environment()
    if checks in ('warn', 'off'):
        notes.append(f'the output checks are {checks} '
                     f'(${_OUTPUT_CHECKS_VARIABLE}): an element no core wrote shows only as NaN '
                     '(or 0xA5 bytes) in the output')
    generator = torch.Generator().manual_seed(seed)
    cases, failures, skipped = [], [], []
    for shapes in _cases(tensors, cores, zero, tie):
        arguments = list(example_args)
        for position, tensor, shape in zip(positions, tensors, shapes):
            arguments[position] = _new_tensor(tensor, shape, generator)
        try:
            expected = reference(*[a.clone() if isinstance(a, torch.Tensor) else a
                                   for a in arguments])
        except Exception as error:  # noqa: BLE001 - the reference's own refusal
            skipped.append((shapes, f'{type(error).__name__}: {error}'))
            continue
        cases.append(shapes)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')   # the runtime's warnings repeat per shape
                result = op(*arguments)
        except Exception as error:  # noqa: BLE001 - every error of the op is a finding
            failures.append(SweepFailure(shapes, str(error) or type(error).__name__))
            continue
        difference = _first_difference(result, expected, rtol, atol)
        if difference is not None:
            failures.append(SweepFailure(shapes, difference))
    failures.sort(key=lambda f: (sum(math.prod(shape) for shape in f.shapes), f.shapes))
    return SweepResult(_name_of(op), cases, failures, skipped, time.monotonic() - started, notes)
