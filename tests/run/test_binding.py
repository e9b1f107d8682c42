"""test_binding.py - build_custom_op.runner, the Python face of libruncustomop,
on torch tensors.

The builds are those of tests/run/test_library.c: tests/run/kernels/mischief.cpp
built single-core and multicore (tests/run/mischief/), and the fake core
library of tests/run/fake_core.c with a record written here."""

import ast
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record  # noqa: E402
import tap  # noqa: E402  (puts python/ on sys.path)
from build_custom_op import runner  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MULTI = os.path.join(HERE, 'mischief', 'multi', 'mischief')
SINGLE = os.path.join(HERE, 'mischief', 'single', 'mischief')
RUN_CUSTOM_OP = os.path.join(tap.TOP, 'run-custom-op')
NPY = os.path.join(HERE, 'npy.py')
SEGFAULT_ON_3 = ('core 3: op mischief: segmentation fault (SIGSEGV) at address 0x10; the kernel '
                 'used memory it does not own')


def resident_bytes():
    with open('/proc/self/statm') as statm:
        return int(statm.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


class Captured:
    """What on_print and on_warning received."""

    def __init__(self):
        self.printed = []
        self.warned = []

    def on_print(self, core, text):
        self.printed.append((core, text))

    def on_warning(self, text):
        self.warned.append(text)


class RunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global torch
        import torch
        cls.work = tempfile.mkdtemp(prefix='bco-binding-test.')
        cls.fake = os.path.join(cls.work, 'fake')
        for name in [f'fake_cpu{i}.so' for i in range(8)]:
            os.symlink(os.path.join(HERE, 'fake', name), os.path.join(cls.work, name))
        record.write(cls.fake, 8, record.FAKE_OPS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def assertScript(self, script, stdout):
        """Runs script in a Python process of its own (which ends with what
        it leaves running), and checks that it exits 0 having printed stdout."""
        done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.join(tap.TOP, 'python')),
                              timeout=60)
        self.assertEqual((done.returncode, done.stdout), (0, stdout), done.stderr)

    def open(self, path=MULTI, **options):
        library = runner.open(path, **options)
        self.addCleanup(library.close)
        return library

    def test_open_lists_the_ops(self):
        library = self.open()
        self.assertEqual(library.cores, 8)
        self.assertEqual([op.name for op in library.ops],
                         ['relu', 'mischief', 'chatter', 'warn', 'alias_probe'])
        self.assertEqual(library.op('mischief'),
                         runner.Op('mischief', 'Tii', '(Tensor x, int how, int core)'))
        with self.assertRaises(runner.RunError) as caught:
            library.op('gelu')
        self.assertEqual(caught.exception.message, f'{MULTI} has no op gelu (its ops: relu, '
                         'mischief, chatter, warn, alias_probe)')
        self.assertEqual(self.open(SINGLE).cores, 1)
        self.assertEqual(self.open(MULTI, cores=8).cores, 8)

    def test_open_errors(self):
        with self.assertRaises(runner.RunError) as caught:
            runner.open(MULTI + '.so')
        self.assertEqual(caught.exception.message, f'{MULTI}.so: name the build without a suffix, '
                         f'as BUILD_DIR/NAME (e.g. build/relu for build/relu.so)')
        self.assertEqual(caught.exception.kind, 'usage')
        with self.assertRaises(runner.RunError) as caught:
            runner.open(SINGLE, cores=8)
        self.assertEqual(caught.exception.message, f'{SINGLE} is a single-core build ({SINGLE}.ops '
                         'names one core library): --cores 8 needs a multicore build; leave out '
                         '--cores, or rebuild with build-custom-op --target host --multicore')
        self.assertEqual(caught.exception.kind, 'build')
        with self.assertRaises(runner.RunError) as caught:
            runner.open(MULTI, cores=3)
        self.assertEqual(caught.exception.message, 'cores=3: expected 1 or 8 (or None: as the '
                         'build is)')

    def test_listing_needs_no_torch(self):
        """The module imports, opens and lists without torch."""
        script = ('import sys; sys.modules["torch"] = None\n'
                  'from build_custom_op import runner\n'
                  f'with runner.open({MULTI!r}) as library:\n'
                  '    print(library.cores, [op.kinds for op in library.ops])\n')
        done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.join(tap.TOP, 'python')))
        self.assertEqual((done.returncode, done.stdout, done.stderr),
                         (0, "8 ['T', 'Tii', 'Ti', 'T', 'T']\n", ''))

    def test_the_dtype_views_agree(self):
        """The library's dtype table, runner's torch dtypes (read from it)
        and the gdb printers' table say the same, exactly."""
        table = [('float32', 6, 4), ('bfloat16', 15, 2), ('float16', 5, 2), ('int32', 3, 4),
                 ('int8', 1, 1), ('int64', 4, 8), ('int16', 2, 2), ('uint8', 0, 1)]
        self.assertEqual(runner._dtypes(), table)
        self.open(SINGLE).run('relu', torch.zeros(1))  # runner reads its torch dtypes
        self.assertEqual(runner._dtype_numbers, {
            torch.float32: 6, torch.bfloat16: 15, torch.float16: 5, torch.int32: 3, torch.int8: 1,
            torch.int64: 4, torch.int16: 2, torch.uint8: 0})
        self.assertEqual(runner._device_dtypes,
                         'float32, bfloat16, float16, int32, int8, int64, int16, uint8')
        # sdk/host/gdb/customop_host_printers.py imports gdb: read its table as text.
        printers = os.path.join(tap.TOP, 'sdk', 'host', 'gdb', 'customop_host_printers.py')
        with open(printers) as source:
            tree = ast.parse(source.read())
        dtypes = next(ast.literal_eval(node.value) for node in tree.body
                      if isinstance(node, ast.Assign)
                      and getattr(node.targets[0], 'id', None) == 'DTYPES')
        self.assertEqual({code: entry[1] for code, entry in dtypes.items()},
                         {code: size for _, code, size in table})

    def test_relu_on_1_and_8_cores(self):
        x = torch.linspace(-5, 5, 1001)
        for path in (SINGLE, MULTI):
            with self.subTest(path=path):
                y = self.open(path).run('relu', x)
                self.assertTrue(torch.equal(y, torch.relu(x)))
                self.assertEqual(y.dtype, torch.float32)

    def run_cli(self, *arguments):
        done = subprocess.run([RUN_CUSTOM_OP, *arguments], capture_output=True, text=True)
        # Under make check-asan, ASan warns that it cannot follow the runtime's
        # stack switches: the sanitizer's line, not the program's.
        errors = [line for line in done.stderr.splitlines()
                  if "WARNING: ASan doesn't fully support makecontext/swapcontext" not in line]
        self.assertEqual((done.returncode, errors), (0, []))

    def test_results_equal_the_npy_path(self):
        """The same op on the same values: the binding's tensor and
        run-custom-op's .npy file hold the same bytes."""
        import numpy
        x = torch.randn(3, 7, 11)
        y = torch.randn(3, 7, 11)
        numpy.save(os.path.join(self.work, 'x.npy'), x.numpy())
        numpy.save(os.path.join(self.work, 'y.npy'), y.numpy())
        out = os.path.join(self.work, 'out.npy')
        cases = [
            (MULTI, 'relu', [x], ['--in', 'x.npy']),
            (SINGLE, 'relu', [x], ['--in', 'x.npy']),
            (self.fake, 'scale2', [x], ['--in', 'x.npy']),
            (self.fake, 'axpby', [x, y, 3, 0.25, 100],
             ['--in', 'x.npy', '--in', 'y.npy', '--scalar', '3', '--scalar', '0.25',
              '--scalar', '100']),
            (self.fake, 'axpby', [x, y, -1.5, 2, 7],
             ['--in', 'x.npy', '--in', 'y.npy', '--scalar', '-1.5', '--scalar', '2',
              '--scalar', '7']),
        ]
        for path, op, arguments, words in cases:
            with self.subTest(path=path, op=op, arguments=words):
                words = [word if not word.endswith('.npy') else os.path.join(self.work, word)
                         for word in words]
                self.run_cli('--op', op, *words, '--out', out, path)
                expected = torch.from_numpy(numpy.load(out))
                got = self.open(path).run(op, *arguments)
                self.assertEqual(got.dtype, expected.dtype)
                self.assertTrue(torch.equal(got.nan_to_num(123), expected.nan_to_num(123)))
        fill = self.open(self.fake).run('fill', 2 ** 40, shape=(2, 3), dtype=torch.int64)
        self.assertEqual(fill.tolist(), [[2 ** 40] * 3] * 2)
        scalar = self.open(self.fake).run('scalar_dtype', 3, shape=(2,), dtype=torch.float32)
        self.assertEqual(scalar.tolist(), [4.0, 3.0], 'an int for a Scalar is int64 (dtype 4)')
        scalar = self.open(self.fake).run('scalar_dtype', 2.5, shape=(2,), dtype=torch.float32)
        self.assertEqual(scalar.tolist(), [6.0, 2.5], 'a float for a Scalar is float32 (dtype 6)')

    def test_inputs_are_used_in_place(self):
        """alias_probe writes out[0] = 7, then reads x[0] into out[1]: with
        out the input itself, the kernel sees its own write only when it
        reads the caller's memory."""
        x = torch.tensor([1.0, 2.0, 3.0, 4.0])
        address = x.data_ptr()
        library = self.open(output_checks='off')  # alias_probe writes two elements only
        result = library.run('alias_probe', x, out=x)
        self.assertIs(result, x)
        self.assertEqual(x.tolist(), [7.0, 7.0, 3.0, 4.0])
        self.assertEqual(x.data_ptr(), address)

    def test_a_zero_tensor_is_read_as_zeros(self):
        """autograd's ZeroTensor holds no memory (its data pointer is NULL):
        the kernel reads zeros."""
        zeros = torch._efficientzerotensor(4)
        self.assertTrue(torch.equal(self.open().run('relu', zeros), torch.zeros(4)))

    def test_other_tensors_are_copied_and_never_converted(self):
        library = self.open(output_checks='off')
        base = torch.linspace(-4, 4, 16)
        strided = base[::2]
        self.assertFalse(strided.is_contiguous())
        before = base.clone()
        self.assertTrue(torch.equal(library.run('relu', strided), torch.relu(strided)))
        self.assertTrue(torch.equal(base, before), 'the input is left as it was')
        out = torch.zeros(16)[::2]
        self.assertIs(library.run('relu', strided, out=out), out)
        self.assertTrue(torch.equal(out, torch.relu(strided)), 'a strided out is written')
        probe = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])[::2]
        library.run('alias_probe', probe, out=probe)
        self.assertEqual(probe.tolist(), [7.0, 1.0, 5.0],
                         'a copied input is not the memory the output is written to')
        with self.assertRaises(runner.RunError) as caught:
            library.run('relu', torch.zeros(4, dtype=torch.float64))
        self.assertEqual(caught.exception.message, 'relu argument 1 (Tensor x) has dtype float64, '
                         'which the device does not have (its dtypes: float32, bfloat16, float16, '
                         'int32, int8, int64, int16, uint8); convert it first, e.g. with '
                         '.to(torch.float32)')
        self.assertEqual((caught.exception.kind, caught.exception.op), ('argument', 'relu'))

    def test_outputs(self):
        with self.assertRaises(runner.RunError) as caught:
            self.open().run('alias_probe', torch.ones(4))
        self.assertEqual((caught.exception.message, caught.exception.kind, caught.exception.core),
                         ('op alias_probe: output coverage: elements [2, 4) of the output were '
                          'written by no core (on the device they keep what the output buffer held '
                          'before the op)', 'op', None))
        warned = []
        library = self.open(output_checks='warn', on_warning=warned.append)
        unwritten = library.run('alias_probe', torch.ones(4))
        self.assertEqual(unwritten[:2].tolist(), [7.0, 1.0])
        self.assertTrue(torch.isnan(unwritten[2:]).all(), 'elements no core wrote are NaN')
        self.assertEqual(warned, ['op alias_probe: output coverage: elements [2, 4) of the output '
                                  'were written by no core (on the device they keep what the output '
                                  'buffer held before the op)'])
        fake = self.open(self.fake)
        made = fake.run('scalar_dtype', 1, shape=[2], dtype=torch.float32)
        self.assertEqual(made.shape, (2,))
        with self.assertRaises(runner.RunError) as caught:
            fake.run('fill', 1)
        self.assertEqual(caught.exception.message, "fill has no tensor argument to take the "
                         "output's shape and dtype from; give shape= and dtype=")

    def test_profiles(self):
        """Library.run(..., profile=True) and build_custom_op.profile(): the
        library's profiles, presented."""
        import build_custom_op
        library = self.open()
        x = torch.linspace(-4.5, 4.5, 10)
        result, profile = library.run('relu', x, profile=True)
        self.assertTrue(torch.equal(result, torch.relu(x)))
        self.assertEqual((profile.op, len(profile.cores)), ('relu', 8))
        core = profile.cores[3]
        self.assertEqual((core.core, core.tensor_to_tcm_calls, core.tensor_to_tcm_bytes,
                          core.tcm_to_tensor_bytes, core.tcm_peak_bytes,
                          core.output_elements_written, core.element_reads),
                         (3, 1, 8, 8, 1024, 2, 0))
        self.assertEqual(list(core.estimated_us), ['hbm_element', 'stream', 'tcm_copy', 'compute',
                                                   'result_copy'])
        self.assertEqual(core.estimated_us['tcm_copy'], core.estimated_device_us)
        self.assertEqual(profile.hints, [], 'no core writes more than an even share, 2 elements')
        _, single = self.open(SINGLE).run('relu', x, profile=True)
        self.assertEqual([(hint.kind, round(hint.saves_us, 3)) for hint in single.hints],
                         [('multicore', 0.016)], 'a single-core TCM relu: 8 cores would do it')
        self.assertTrue(single.hints[0].text.startswith('the op runs on one core: shared by the 8 '
                                                        'cores'), single.hints[0].text)
        from build_custom_op import _profile
        shared = _profile._shared()
        self.assertEqual([shared.rco_profile_kind_name(k) for k in (_profile._KIND_COUNT - 1,
                                                                    _profile._KIND_COUNT)],
                         [b'result_copy', None], 'the binding knows as many kinds as the library')
        self.assertEqual([shared.rco_hint_kind_name(k) for k in (_profile._HINT_COUNT - 1,
                                                                 _profile._HINT_COUNT)],
                         [b'multicore', None], 'and as many kinds of hint')
        self.assertEqual(profile.estimated_device_us, max(c.estimated_device_us for c in profile.cores))
        self.assertAlmostEqual(profile.imbalance, 1.6)
        self.assertTrue(profile.json().startswith('{"op": "relu", "cores": [\n  {"core": 0, '),
                        profile.json())
        self.assertTrue(str(profile).startswith('profile of op relu on 8 cores (device time: an '
                                                'estimate'), str(profile))
        self.assertTrue(profile.svg().startswith('<?xml'))
        self.assertIsInstance(library.run('relu', x), torch.Tensor, 'without profile=True: the output')
        fake = self.open(self.fake)
        with build_custom_op.profile() as outer:
            library.run('relu', x)
            with build_custom_op.profile() as inner:
                fake.run('scale2', x)
            self.assertEqual(outer, [], 'filled when the block ends')
        self.assertEqual([p.op for p in inner], ['scale2'])
        self.assertEqual([p.op for p in outer], ['relu', 'scale2'])
        self.assertEqual(outer[1].cores[7].output_elements_written, 2)
        with build_custom_op.profile() as failed:
            with self.assertRaises(runner.RunError):
                library.run('mischief', x, 1, 3)
        self.assertEqual(failed, [], 'a call that failed on a core has no profile')
        with self.assertRaises(runner.RunError) as caught:
            self.open(output_checks='sometimes')
        self.assertEqual((caught.exception.message, caught.exception.kind),
                         ("output_checks='sometimes': expected 'error', 'warn' or 'off' (or None)",
                          'usage'))

    def test_bad_arguments(self):
        library = self.open(self.fake)
        x = torch.ones(10)
        cases = [
            (('axpby', x, x, 3, 0.5), 'axpby expects (Tensor x, Tensor y, Scalar a, float b, int n); '
             'got 4 arguments'),
            (('axpby', x, 1, 3, 0.5, 7), 'axpby argument 2 (Tensor y) is a tensor, but the number 1 '
             'was given'),
            (('axpby', x, x, x, 0.5, 7), 'axpby argument 3 (Scalar a) is a number, but a tensor was '
             'given'),
            (('axpby', x, x, 3, 0.5, 2.5), 'axpby argument 5 (int n): 2.5 is not an integer'),
            (('axpby', x, x, 3, 0.5, 2 ** 31), 'axpby argument 5 (int n): 2147483648 is out of the '
             'int32 range'),
            (('axpby', x, x, 3, 1e39, 7), 'axpby argument 4 (float b): 1e+39 is out of the float32 '
             'range'),
            (('fill', 2 ** 64), 'fill argument 1 (long long v): 18446744073709551616 is out of the '
             'int64 range'),
            (('axpby', x, x, 2 ** 63, 0.5, 7), 'axpby argument 3 (Scalar a): 9223372036854775808 is '
             'out of the int64 range'),
            (('axpby', x, x, 'three', 0.5, 7), 'axpby argument 3 (Scalar a): a str is neither a '
             'torch tensor nor a number'),
        ]
        for arguments, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(runner.RunError) as caught:
                    library.run(*arguments, shape=(10,), dtype=torch.float32)
                self.assertEqual(caught.exception.message, message)
                self.assertEqual(caught.exception.kind, 'argument')
        self.assertTrue(torch.equal(library.run('scale2', x), 2 * x), 'the next call works')

    def test_faults_are_errors_and_the_next_call_works(self):
        library = self.open()
        x = torch.linspace(-1, 1, 64)
        cases = [
            (1, 3, SEGFAULT_ON_3),
            (2, 5, 'core 5: op mischief: the kernel called abort() (SIGABRT), as a failed assert() '
             'does'),
            (3, 0, 'core 0: op mischief: the kernel threw a C++ exception that it did not catch: '
             'std::runtime_error: the kernel gave up'),
            (13, 6, 'core 6: op mischief: the kernel called exit(0), which would end the process on '
             'the host; a kernel ends by returning its result'),
        ]
        for how, core, message in cases:
            with self.subTest(how=how):
                with self.assertRaises(runner.RunError) as caught:
                    library.run('mischief', x, how, core)
                self.assertEqual((caught.exception.message, caught.exception.core,
                                  caught.exception.op, caught.exception.kind),
                                 (message, core, 'mischief', 'op'))
                self.assertTrue(torch.equal(library.run('relu', x), torch.relu(x)))

    def test_time_limit(self):
        library = self.open(SINGLE, timeout=0.2)
        x = torch.ones(4)
        with self.assertRaises(runner.RunError) as caught:
            library.run('mischief', x, 5, 0)
        self.assertEqual((caught.exception.message, caught.exception.kind, caught.exception.core),
                         ('core 0: op mischief: still running when the time limit of 0.2 s passed: '
                          'stopped', 'timeout', 0))
        self.assertTrue(torch.equal(library.run('relu', -x), torch.zeros(4)),
                        'the next call runs on new cores')
        library.close()
        self.assertTrue(torch.equal(self.open(SINGLE).run('relu', x, timeout=5), x),
                        'the build opened again runs')
        with self.assertRaises(runner.RunError) as caught:
            self.open(SINGLE).run('mischief', x, 6, 0, timeout=0.1)
        self.assertEqual(caught.exception.kind, 'timeout', 'a time limit given to one call')

    def test_printf_and_warnings_reach_the_callbacks(self):
        captured = Captured()
        library = self.open(on_print=captured.on_print, on_warning=captured.on_warning)
        library.run('chatter', torch.ones(8), 4)
        self.assertEqual(captured.printed, [(core, f'core {core}\n0123') for core in range(8)])
        library.run('warn', torch.ones(8))
        self.assertEqual(captured.warned, ['cores 0-7: op warn: the first warning',
                                           'cores 0-7: op warn: the second warning, 2'],
                         'a warning of every core comes once, naming them')
        captured.printed.clear()
        with self.assertRaises(runner.RunError):
            library.run('mischief', torch.ones(8), 1, 3)
        self.assertEqual(captured.printed, [], 'nothing printed, nothing handed over')

    def test_printf_buffer_size(self):
        captured = Captured()
        os.environ['NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES'] = '8'
        try:
            library = self.open(SINGLE, on_print=captured.on_print)
            with self.assertRaises(runner.RunError) as caught:
                os.environ['NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES'] = '12'
                self.open(SINGLE)
        finally:
            del os.environ['NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES']
        self.assertEqual((caught.exception.kind, caught.exception.message),
                         ('usage', 'NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=12: not a power of two; '
                          'the device takes a power of two up to 131072 (the bytes of each core\'s '
                          'printf buffer), or 0 to print nothing'))
        library.run('chatter', torch.ones(4), 12)
        self.assertEqual(captured.printed, [(0, '[11 bytes of printf output lost: the buffer holds '
                                                '8 bytes (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES)]\n'
                                                '45678901')])

    def test_default_callbacks(self):
        library = self.open()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            library.run('chatter', torch.ones(8), 2)
        self.assertEqual(out.getvalue(), 'core 0\n01')
        lines = err.getvalue().splitlines()
        self.assertIn(lines[0], ('', 'note: lines marked [core N] were printed by cores 1-7; on '
                                 "the device only core 0's output reaches the host"))
        self.assertNotIn('run-custom-op', err.getvalue(), 'the program is not named')
        self.assertEqual([line for line in lines if line.startswith('[core 7]')],
                         ['[core 7] core 7', '[core 7] 01'])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            library.run('warn', torch.ones(8))
        self.assertEqual([(w.category, str(w.message)) for w in caught],
                         [(runner.RunWarning, 'cores 0-7: op warn: the first warning'),
                          (runner.RunWarning, 'cores 0-7: op warn: the second warning, 2')])
        self.assertEqual(caught[0].filename, __file__, 'the warning points at the caller')

    def test_default_callbacks_with_no_standard_streams(self):
        """Python sets sys.stdout and sys.stderr to None when they are closed:
        the printf output is dropped, as print() drops it, and the call
        returns its output."""
        library = self.open()
        with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
            y = library.run('chatter', torch.arange(-4., 12.), 2)
        self.assertTrue(torch.equal(y, torch.arange(-4., 12.).clamp(min=0)))

    def test_no_leak_over_5000_calls(self):
        library = self.open()
        x = torch.randn(4, 4)
        # Long enough for the allocators' caches (eight threads', and
        # AddressSanitizer's under make check-asan) to reach their size.
        for _ in range(4000):
            library.run('relu', x)
        threads = threading.active_count()
        descriptors = len(os.listdir('/proc/self/fd'))
        # 5000 calls against 1 MiB: a leak of 200 bytes a call shows, and
        # AddressSanitizer's allocator, whose resident size swings by about
        # 500 KiB either way from one 1000 calls to the next, does not.
        before = resident_bytes()
        for _ in range(5000):
            library.run('relu', x)
        grown = resident_bytes() - before
        self.assertLess(grown, 1024 * 1024, f'resident memory grew by {grown} bytes')
        self.assertEqual((threading.active_count(), len(os.listdir('/proc/self/fd'))),
                         (threads, descriptors))

    def test_threads_and_two_libraries(self):
        one, other = self.open(), self.open(SINGLE)
        x = torch.linspace(-3, 3, 100)
        wrong = []

        def loop(library):
            for _ in range(100):
                if not torch.equal(library.run('relu', x), torch.relu(x)):
                    wrong.append(library)

        threads = [threading.Thread(target=loop, args=(library,))
                   for library in (one, one, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(wrong, [])

    @staticmethod
    def run_in_a_child(library, x):
        """The exit code of a child of fork() that runs relu on library
        twice: 0 when both give relu(x), None when it hangs."""
        child = os.fork()
        if child == 0:
            try:
                right = all(torch.equal(library.run('relu', x), torch.relu(x)) for _ in range(2))
                code = 0 if right else 1
            except BaseException:   # noqa: B036 - the child must end here, whatever happens
                code = 2
            os._exit(code)
        status = tap.wait_for_child(child, 10)
        return None if status is None else os.waitstatus_to_exitcode(status)

    def test_fork(self):
        library = self.open(SINGLE)
        x = torch.ones(4)
        self.assertEqual(self.run_in_a_child(library, x), 0,
                         'in a forked child the parent\'s library runs on cores of its own')
        self.assertTrue(torch.equal(library.run('relu', x), x), 'and goes on in the parent')

    def test_buffers_a_lost_core_may_write_are_kept(self):
        """Mischief 30 blocks SIGURG on the cores that do not run on the
        caller's thread, so the time limit cannot stop them, and they go on
        writing into the output: the call's tensors must never be freed, not
        even when the interpreter ends (else the cores write into memory
        that another object got, or into unmapped memory).  In a process of
        its own, which ends with the lost cores, through the interpreter's
        exit, after close()."""
        script = ('import gc, threading, time, weakref, torch\n'
                  'from build_custom_op import runner\n'
                  f'library = runner.open({MULTI!r}, timeout=1)\n'
                  'x, out = torch.ones(1024), torch.zeros(1024)\n'
                  'library.run("relu", x)   # the threads started\n'
                  'inputs, outputs = weakref.ref(x), weakref.ref(out)\n'
                  'try:\n'
                  '    library.run("mischief", x, 30, threading.get_native_id(), out=out)\n'
                  'except runner.RunError as error:\n'
                  '    print(error.kind)\n'
                  'del x, out\n'
                  'gc.collect()\n'
                  'print(inputs() is not None, outputs() is not None)\n'
                  'time.sleep(0.2)\n'
                  'print(outputs().max().item() > 1, flush=True)\n'
                  'library.close()\n')
        self.assertScript(script, 'timeout\nTrue True\nTrue\n')

    def test_ctrl_c_stops_a_call(self):
        script = ('import os, signal, threading, torch\n'
                  'from build_custom_op import runner\n'
                  f'library = runner.open({SINGLE!r})\n'
                  'threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()\n'
                  'try:\n'
                  '    library.run("mischief", torch.ones(4), 5, 0)   # a loop\n'
                  'except KeyboardInterrupt:\n'
                  '    print("KeyboardInterrupt")\n'
                  'print(library.run("relu", torch.tensor([-1.0, 2.0])).tolist())\n')
        self.assertScript(script, 'KeyboardInterrupt\n[0.0, 2.0]\n')

    def test_fork_while_another_thread_runs_an_op(self):
        library = self.open(SINGLE, timeout=2)
        x = torch.ones(4)
        started = threading.Event()

        def stuck():
            started.set()
            with contextlib.suppress(runner.RunError):
                library.run('mischief', x, 5, 0)   # a loop, until the time limit

        thread = threading.Thread(target=stuck)
        thread.start()
        started.wait()
        time.sleep(0.3)   # inside run, holding the library's turn
        code = self.run_in_a_child(library, x)
        thread.join()
        self.assertIsNotNone(code, 'the child hung on the lock the parent\'s thread held')
        self.assertEqual(code, 0)

    def test_out_bumps_the_version_counter(self):
        library = self.open()
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.zeros(3)
        loss = (a * w).sum()    # saves w
        version = w._version
        library.run('relu', torch.tensor([1.0, -2.0, 3.0]), out=w)
        self.assertGreater(w._version, version)
        with self.assertRaisesRegex(RuntimeError, 'modified by an inplace operation'):
            loss.backward()
        leaf = torch.zeros(3, requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, 'a leaf Variable that requires grad'):
            library.run('relu', torch.ones(3), out=leaf)
        self.assertEqual(leaf.tolist(), [0.0, 0.0, 0.0], 'refused before the kernel ran')

    def test_negative_views_are_read_and_written_as_they_show(self):
        library = self.open()
        x = torch.tensor([1.5, -2.0, 0.25, -3.0])
        negative = torch._neg_view(x)
        self.assertTrue(torch.equal(library.run('relu', negative), torch.relu(-x)))
        base = torch.zeros(4)
        out = torch._neg_view(base)
        self.assertIs(library.run('relu', x, out=out), out)
        self.assertEqual(out.tolist(), [1.5, 0.0, 0.25, 0.0])
        self.assertEqual(base.tolist(), [-1.5, 0.0, -0.25, 0.0])

    def test_an_output_that_overlaps_an_input_in_part(self):
        library = self.open()
        base = torch.linspace(-4, 4, 200)
        before = base.clone()
        with self.assertRaises(runner.RunError) as caught:
            library.run('relu', base[:150], out=base[50:])
        self.assertEqual((caught.exception.message, caught.exception.kind),
                         ("relu argument 1 (Tensor x) and relu's output share some of their "
                          'memory: the cores would read elements they have already written; pass '
                          'an output of its own, or the input itself', 'argument'))
        self.assertTrue(torch.equal(base, before), 'refused before the kernel ran')
        same = base[:150]
        self.assertIs(library.run('relu', same, out=same), same)
        self.assertTrue(torch.equal(base[:150], torch.relu(before[:150])))

    def test_arguments_refused_with_a_message(self):
        library = self.open()
        fake = self.open(self.fake)
        x = torch.ones(10)
        cases = [
            (lambda: fake.run('axpby', x, x, 3, 0.5, 12.0, shape=(10,), dtype=torch.float32),
             'argument', 'axpby argument 5 (int n): 12.0 is not an integer'),
            (lambda: library.run('relu', torch.ones(4).to_sparse()), 'argument',
             'relu argument 1 (Tensor x) is a torch.sparse_coo tensor; the device takes dense '
             '(strided) tensors: pass it with .to_dense()'),
            (lambda: library.run('relu', x, out=torch.zeros(1).expand(10)), 'argument',
             "relu's output has elements that share memory (an expanded tensor): the cores "
             'would write each of them more than once; give out a tensor of its own'),
            (lambda: fake.run('fill', 1, shape=[2.5], dtype=torch.int64), 'usage',
             'shape=[2.5]: expected the sizes of the output, whole numbers >= 0, e.g. (2, 3)'),
        ]
        for call, kind, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(runner.RunError) as caught:
                    call()
                self.assertEqual((caught.exception.message, caught.exception.kind),
                                 (message, kind))
        self.assertEqual(fake.run('fill', 5, shape=3, dtype=torch.int64).tolist(), [5, 5, 5])
        import numpy
        made = fake.run('axpby', x, x, numpy.float32(2.0), numpy.float64(0.5), numpy.int64(1),
                        shape=(10,), dtype=torch.float32)
        self.assertEqual(made.tolist(), fake.run('axpby', x, x, 2.0, 0.5, 1, shape=(10,),
                                                 dtype=torch.float32).tolist())

    def test_close(self):
        with runner.open(MULTI) as library:
            self.assertIn('8 cores', repr(library))
        self.assertIn('closed', repr(library))
        with self.assertRaises(runner.RunError) as caught:
            library.run('relu', torch.ones(4))
        self.assertEqual(caught.exception.message, f'{MULTI} is closed')
        library.close()


if __name__ == '__main__':
    tap.main(needs_torch=True)
