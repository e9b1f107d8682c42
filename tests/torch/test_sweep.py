"""test_sweep.py - build_custom_op.testing.sweep() on host ops: three row
softmaxes with a temperature on 8 cores (fixtures/sweep_ops.cpp), which a
32 x 1024 example shows all correct, while the sweep finds the kernel that
gives each core rows // 8 rows and the one that drops the last partial
chunk of each row, smallest shape first, with the emulator's message naming
the op as torch.ops calls it; the correct one (softmax_t, a name ending in
_t) passes."""

import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

SOURCES = [os.path.join(fixture.FIXTURES, 'sweep_ops.cpp')]
SHAPES = [os.path.join(fixture.FIXTURES, 'sweep_shape.cpp')]
TEMPERATURE = 0.5
UNWRITTEN = 'were written by no core (on the device they keep what the output buffer held before the op)'
state = {}


def reference(x, temperature):
    import torch
    return torch.softmax(x / temperature, dim=1)


def setUpModule():
    from build_custom_op import custom_op
    work = state['work'] = tempfile.mkdtemp(prefix='bco-sweep-test.')
    state['environment'] = dict(os.environ)
    os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(work, 'bundles')
    os.environ.pop('BUILD_CUSTOM_OP_OUTPUT_CHECKS', None)
    custom_op.load('sweep', SOURCES, SHAPES, build_directory=os.path.join(work, 'out'),
                   multicore=True, target='host')


def tearDownModule():
    shutil.rmtree(state['work'], ignore_errors=True)
    os.environ.clear()
    os.environ.update(state['environment'])


def report(result):
    """str(result) with the sweep's time left out."""
    return re.sub(r' in [0-9.]+ s,', ' in S s,', str(result))


class SweepTest(unittest.TestCase):
    def setUp(self):
        import torch
        from build_custom_op import testing
        self.torch = torch
        self.testing = testing
        self.ops = torch.ops.sweep_ops
        self.example = torch.randn(32, 1024, generator=torch.Generator().manual_seed(1))

    def test_the_sizes_of_a_dimension(self):
        self.assertEqual(self.testing.sizes_around(32), [
            0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 39, 40, 41])
        self.assertEqual(self.testing.sizes_around(1024), [
            0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65, 127, 128,
            129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 1031, 1032, 1033])
        self.assertEqual(self.testing.sizes_around(5, cores=1, zero=False),
                         [1, 2, 3, 4, 5, 6, 7, 8, 9])

    def test_the_example_hides_both_bugs(self):
        expected = reference(self.example, TEMPERATURE)
        for name in ('softmax_t', 'softmax_rows8', 'softmax_tail'):
            result = getattr(self.ops, name)(self.example, TEMPERATURE)
            self.assertTrue(self.torch.allclose(result, expected, rtol=1e-5, atol=1e-6), name)

    def test_a_correct_kernel_passes(self):
        result = self.testing.sweep(self.ops.softmax_t, reference, self.example, TEMPERATURE)
        self.assertTrue(result, str(result))
        self.assertEqual((result.failures, result.skipped), ([], []))
        self.assertEqual(len(result.cases), 56)
        self.assertEqual(result.cases[0], [(32, 1024)], 'the example first')
        self.assertEqual(report(result), 'sweep of sweep_ops::softmax_t: 56 shapes in S s, 0 failed')

    def test_rows_not_divisible_by_the_cores(self):
        result = self.testing.sweep(self.ops.softmax_rows8, reference, self.example, TEMPERATURE)
        self.assertFalse(result)
        rows = [r for r in self.testing.sizes_around(32) if r % 8]
        self.assertEqual([failure.shapes for failure in result.failures],
                         [[(r, 1024)] for r in rows], 'each row count that 8 does not divide')
        op = 'op sweep_ops::softmax_rows8 (kernel softmax_rows8_kernel)'
        self.assertEqual(result.failures[0].message,
                         f'{op}: output coverage: elements [0, 1024) of the output (row 0) '
                         f'{UNWRITTEN}')
        self.assertEqual(result.failures[rows.index(9)].message,
                         f'{op}: output coverage: elements [8192, 9216) of the output (row 8) '
                         f'{UNWRITTEN}')
        self.assertEqual(report(result), '\n'.join([
            f'sweep of sweep_ops::softmax_rows8: 56 shapes in S s, {len(rows)} failed',
            'failures, smallest first:'] + [
            f'  ({r}, 1024): {op}: output coverage: elements [{r // 8 * 8 * 1024}, {r * 1024}) of '
            f'the output ({"row" if r % 8 == 1 else "rows"} '
            f'{r // 8 * 8 if r % 8 == 1 else f"{r // 8 * 8}-{r - 1}"}) {UNWRITTEN}'
            for r in rows[:5]] + [f'  ... and {len(rows) - 5} more (see .failures)']))

    def test_a_missing_tail_chunk(self):
        result = self.testing.sweep(self.ops.softmax_tail, reference, self.example, TEMPERATURE)
        self.assertFalse(result)
        columns = [c for c in self.testing.sizes_around(1024) if c % 256]
        self.assertEqual([failure.shapes for failure in result.failures],
                         [[(32, c)] for c in columns], 'each row length that 256 does not divide')
        self.assertEqual(result.failures[0].message,
                         'op sweep_ops::softmax_tail: output coverage: elements [0, 32) of the '
                         f'output (rows 0-31) {UNWRITTEN}')
        self.assertEqual(result.failures[-1].message.split('\n')[0],
                         'op sweep_ops::softmax_tail: output coverage: elements [1024, 1033) of '
                         f'the output (row 0) {UNWRITTEN}')

    def test_a_result_that_differs_from_the_reference(self):
        def twice_as_hot(x, temperature):
            return reference(x, 2 * temperature)
        result = self.testing.sweep(self.ops.softmax_t, twice_as_hot, self.example, TEMPERATURE)
        self.assertFalse(result)
        self.assertEqual(result.failures[0].shapes, [(32, 2)],
                         'the smallest: a row of one element is 1 whatever the temperature')
        self.assertRegex(result.failures[0].message,
                         r'^element \(0, 0\) is [0-9.e-]+ where the reference has [0-9.e-]+ '
                         r'\(and 63 other elements\)$')

    def test_the_message_of_a_difference(self):
        torch = self.torch
        first = self.testing._first_difference
        got = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertIsNone(first(got, got.clone(), 1e-5, 1e-6))
        self.assertEqual(first(got, torch.tensor([[1.0, 2.0], [3.0, 5.0]]), 1e-5, 1e-6),
                         'element (1, 1) is 4.0 where the reference has 5.0')
        self.assertEqual(first(got, torch.tensor([[0.0, 2.0], [0.0, 0.0]]), 1e-5, 1e-6),
                         'element (0, 0) is 1.0 where the reference has 0.0 (and 2 other elements)')
        self.assertEqual(first(got, torch.zeros(2, 3), 1e-5, 1e-6),
                         'the output has shape (2, 2), the reference (2, 3)')
        self.assertEqual(first(got, got.double(), 1e-5, 1e-6),
                         'the output has dtype torch.float32, the reference torch.float64')
        nan = torch.tensor([float('nan')])
        self.assertEqual(first(nan, torch.tensor([1.0]), 1e-5, 1e-6),
                         'element (0,) is nan where the reference has 1.0')

    def test_a_shape_the_reference_refuses_is_skipped(self):
        def no_empty_rows(x, temperature):
            if x.shape[1] == 0:
                raise ValueError('no empty rows')
            return reference(x, temperature)
        result = self.testing.sweep(self.ops.softmax_t, no_empty_rows, self.example, TEMPERATURE)
        self.assertTrue(result)
        self.assertEqual(result.skipped, [([(32, 0)], 'ValueError: no empty rows')])
        self.assertEqual(len(result.cases), 55)
        self.assertEqual(report(result), 'sweep of sweep_ops::softmax_t: 55 shapes in S s, 0 failed, '
                                         '1 refused by the reference')

    def test_a_sweep_the_reference_refuses_whole_is_false(self):
        """Nothing tested is no pass."""
        def refuses(x, temperature):
            raise ValueError('not this one')
        result = self.testing.sweep(self.ops.softmax_t, refuses, self.example, TEMPERATURE)
        self.assertFalse(result)
        self.assertEqual((result.cases, result.failures, len(result.skipped)), ([], [], 56))
        self.assertEqual(report(result),
                         'sweep of sweep_ops::softmax_t: 0 shapes in S s, 0 failed, '
                         '56 refused by the reference\n'
                         'nothing was tested: the reference refused every shape, the first '
                         '(32, 1024) with ValueError: not this one; make the reference take the '
                         'example\'s arguments')


if __name__ == '__main__':
    tap.main(needs_torch=True)
