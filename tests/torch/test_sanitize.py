"""test_sanitize.py - custom_op.load(sanitize=...): only the compute build
gets the sanitizers (the shape library is the one a plain load() uses), a
process without AddressSanitizer's runtime is told exactly what to run, and
with it torch.ops reports a kernel's bug as an error of its core and op,
with the kernel's file:line, and the next call works."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

KERNEL = os.path.join(fixture.FIXTURES, 'relu_sanitize.cpp')
SHAPE = os.path.join(fixture.MLP, 'shape.cpp')
OPTIONS = 'halt_on_error=0:suppress_equal_pcs=0:detect_leaks=0'
state = {}


def asan_in_the_library():
    """Whether libruncustomop itself is built with gcc's ASan (make
    check-asan): then the kernels must use that runtime, and so gcc."""
    done = subprocess.run(['readelf', '-d', os.path.join(fixture.TOP, 'libruncustomop.so')],
                          capture_output=True, text=True)
    return 'libasan.so' in done.stdout


def setUpModule():
    from build_custom_op import custom_op
    from build_custom_op import _shape_library
    work = state['work'] = tempfile.mkdtemp(prefix='bco-sanitize-test.')
    state['environment'] = dict(os.environ)
    if asan_in_the_library():
        os.environ['CXX'] = 'g++'
    os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(work, 'bundles')
    # The shape library a plain load() of these sources uses (cached).
    shape, _ = _shape_library.build_and_load('relu', [SHAPE], [], [], False)
    with open(shape, 'rb') as stream:
        state['shape'] = (shape, stream.read(), os.stat(shape).st_mtime_ns)
    try:
        custom_op.load('relu', [KERNEL], [SHAPE], build_directory=os.path.join(work, 'out'),
                       target='host', sanitize='address,undefined')
    except custom_op.CustomOpError as error:
        state['error'] = error


def tearDownModule():
    shutil.rmtree(state['work'], ignore_errors=True)
    os.environ.clear()
    os.environ.update(state['environment'])


def bundle_path():
    return os.path.join(state['work'], 'out', 'librelu.so')


class SanitizeTest(unittest.TestCase):
    def runtime(self):
        """The LD_PRELOAD and ASAN_OPTIONS that load() said to run with."""
        match = re.search(r'^  LD_PRELOAD=(\S+) ASAN_OPTIONS=(\S+) PROGRAM \.\.\.$',
                          state['error'].message, re.M)
        self.assertIsNotNone(match, state['error'].message)
        return match.group(1), match.group(2)

    def test_without_the_runtime_load_says_what_to_run(self):
        self.assertIn('error', state, 'load() registered a sanitized build without ASan')
        with open(bundle_path(), 'rb') as stream:
            digest = hashlib.md5(stream.read()).hexdigest()
        base = os.path.join(state['work'], 'bundles', digest, 'librelucustomop')
        preload, options = self.runtime()
        # Under make check-asan this process has the runtime already, not the options.
        loaded = 'libasan' in os.environ.get('LD_PRELOAD', '')
        reason = ("AddressSanitizer's runtime is loaded, but ASAN_OPTIONS lacks "
                  'halt_on_error=0 or suppress_equal_pcs=0' if loaded else
                  "its core libraries need AddressSanitizer's runtime loaded first in the process")
        self.assertEqual(state['error'].message, (
            f"load('relu'): step 6 of 6, registering the ops [{base}]: {base} was built with "
            f'--sanitize=address: {reason}; start the program as\n'
            f'  LD_PRELOAD={preload} ASAN_OPTIONS={options} PROGRAM ...\n'
            '(the runtime first in the process; ASan reports and lets the kernel go on, and the '
            'op fails at its end with the first report; run-custom-op does this itself)'))
        before = os.environ.get('ASAN_OPTIONS')
        self.assertEqual(options, f'{before}:{OPTIONS}' if before else OPTIONS)
        # The compiler's own runtime, as the compiler names it.
        compiler = os.environ.get('CXX') or ('clang++' if shutil.which('clang++') else 'c++')
        name = 'libclang_rt.asan-x86_64.so' if compiler == 'clang++' else 'libasan.so'
        asked = subprocess.run([compiler, f'-print-file-name={name}'], capture_output=True,
                               text=True).stdout.strip()
        self.assertEqual(os.path.realpath(preload), os.path.realpath(asked))

    def test_the_shape_library_is_the_plain_one(self):
        from build_custom_op import _bundle
        shape, data, mtime = state['shape']
        bundle = _bundle.read(bundle_path(), 'host')
        self.assertEqual(bundle.member(bundle.shapelib), data)
        self.assertEqual(os.stat(shape).st_mtime_ns, mtime, 'the cached shape library was rebuilt')

    def test_torch_ops_report_a_kernel_bug_with_the_runtime_preloaded(self):
        preload, options = self.runtime()
        script = (
            'import sys, torch\n'
            f'sys.path.insert(0, {os.path.join(fixture.TOP, "python")!r})\n'
            'from build_custom_op import custom_op, runner\n'
            f"custom_op.load_library({bundle_path()!r}, target='host')\n"
            'x = torch.tensor([1.0, -2.0, 3.0, -4.0])\n'
            'print(torch.ops.my_ops.relu_forward(x).tolist())\n'
            'x[0] = 1000.0\n'
            'try:\n'
            '    torch.ops.my_ops.relu_forward(x)\n'
            'except runner.RunError as error:\n'
            '    print(error.core, error.op, error.message)\n'
            'x[0] = 5.0\n'
            'print(torch.ops.my_ops.relu_forward(x).tolist())\n')
        others = os.environ.get('LD_PRELOAD', '')
        environment = dict(os.environ, ASAN_OPTIONS=options,
                           LD_PRELOAD=others if preload in others else f'{preload}:{others}')
        done = subprocess.run([sys.executable, '-c', script],
                              env=environment, capture_output=True, text=True)
        line = fixture.line_of(KERNEL, 'largest = block[i] > largest')
        where = f'{KERNEL}:{line}:19' if 'libclang_rt' in preload else f'{KERNEL}:{line}'
        self.assertEqual((done.returncode, done.stdout), (0, (
            '[1.0, 0.0, 3.0, 0.0]\n'
            '0 relu_forward core 0: op relu_forward: AddressSanitizer: use-after-poison: READ of '
            f'size 4 at {where} in relu_forward(at::Tensor const&) (1 AddressSanitizer report '
            'during the op; the first is on stderr, with its stack)\n'
            '[5.0, 0.0, 3.0, 0.0]\n')), done.stderr)
        self.assertEqual(done.stderr.count('ERROR: AddressSanitizer'), 1, done.stderr)


if __name__ == '__main__':
    tap.main(needs_torch=True)
