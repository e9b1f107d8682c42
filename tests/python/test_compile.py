"""test_compile.py - build_custom_op.compile() over libbuildcustomop, with the
fake Xtensa toolchain and SDK of tests/fake (see tests/python/tap.py)."""

import contextlib
import ctypes
import inspect
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402  (puts python/ on sys.path)
import build_custom_op  # noqa: E402
from build_custom_op import BuildError  # noqa: E402

RELU = 'my_ops::relu(Tensor x) -> Tensor'
AXPY = 'my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor'
CC_OPT = ('-g -std=c++14 -stdlib=libc++-e -fno-jump-tables -Os -Wall -Werror '
          '-Wno-c99-designator -mcoproc')
CORE = '--xtensa-core=ncore2gp --xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config'


class Quiet:
    """Captures what compile() writes to stdout and stderr."""

    def __enter__(self):
        self.out, self.err = io.StringIO(), io.StringIO()
        self.stack = contextlib.ExitStack()
        self.stack.enter_context(contextlib.redirect_stdout(self.out))
        self.stack.enter_context(contextlib.redirect_stderr(self.err))
        return self

    def __exit__(self, *exception):
        return self.stack.__exit__(*exception)


class Discard:
    """A stream that keeps nothing (the memory test must not grow a buffer)."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def wait_for_line(path, prefix, limit=200):
    """Waits (polling, at most limit tenths of a second) for a line of the
    file that starts with prefix; returns it, or None."""
    for _ in range(limit):
        try:
            with open(path) as stream:
                for line in stream:
                    if line.startswith(prefix):
                        return line.rstrip('\n')
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    return None


def handler_address(number):
    """The handler the kernel has for a signal (struct sigaction's first
    member on Linux), read with sigaction(2) so it shows what the process
    really has rather than what Python believes."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(512)
    if libc.sigaction(number, None, buffer) != 0:
        raise OSError(ctypes.get_errno(), 'sigaction')
    return ctypes.c_void_p.from_buffer(buffer).value


def resident_bytes():
    with open('/proc/self/statm') as stream:
        return int(stream.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


class MallocInfo(ctypes.Structure):
    """glibc's struct mallinfo2."""
    _fields_ = [(name, ctypes.c_size_t) for name in (
        'arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks',
        'fordblks', 'keepcost')]


def heap_bytes_in_use():
    """The bytes malloc has handed out and not got back (glibc 2.33 and
    later), or None.  Unlike the resident size this sees a small leak: a
    leaked block cannot hide in memory that is already resident."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, 'mallinfo2'):
        return None
    libc.mallinfo2.restype = MallocInfo
    return libc.mallinfo2().uordblks


class CompileTest(tap.FakeToolchainTest):

    def inc(self):
        return f'-I{self.sdk} -I{self.sdk}/torch/include -I{self.sdk}/c10/include'

    def libs(self, core):
        sdk = self.sdk
        return (f'{sdk}/neuron/libneuroncustomop.a {sdk}/c10/lib/libc10.a -lloader '
                f'-mlsp={sdk}/lsp_fll_load_cpus/lsp_fll_load_cpu{core} -lxmem -lhal -lc++-e '
                f'-lm -lgcc {sdk}/neuron/libcweak.a')

    def build(self, **keywords):
        arguments = dict(name='relu', fn_names=['relu'], src_files=['src/relu.cpp'],
                         schema=[RELU], build_directory='build')
        arguments.update(keywords)
        with Quiet() as quiet:
            result = build_custom_op.compile(**arguments)
        self.assertEqual(quiet.err.getvalue(), '')
        return result

    def build_error(self, **keywords):
        with self.assertRaises(BuildError) as caught:
            self.build(**keywords)
        return caught.exception

    # --- the module ---------------------------------------------------------

    def test_versions(self):
        self.assertEqual(build_custom_op.__version__, '0.21.2.0')
        self.assertEqual(build_custom_op.versions, {'ulib_to_ucode_version': '1.21.1.0',
                                                    'ulib_to_isa_version': '1.0.2520.0'})

    def test_the_positional_signature_is_the_original(self):
        parameters = list(inspect.signature(build_custom_op.compile).parameters.values())
        positional = [(p.name, p.default) for p in parameters
                      if p.kind == p.POSITIONAL_OR_KEYWORD]
        empty = inspect.Parameter.empty
        self.assertEqual(positional, [('name', empty), ('fn_names', empty), ('src_files', empty),
                                      ('schema', empty), ('build_directory', empty),
                                      ('includes', []), ('cflags', []), ('multicore', False),
                                      ('verbose', False)])
        self.assertTrue(all(p.kind == p.KEYWORD_ONLY for p in parameters[9:]))

    def test_the_library_is_the_one_in_the_source_tree(self):
        self.assertEqual(build_custom_op.library_path(),
                         os.path.join(tap.TOP, 'libbuildcustomop.so'))

    # --- what a build returns -----------------------------------------------

    def test_single_core_returns_the_packed_library(self):
        self.assertEqual(self.build(fn_names=['relu', 'axpy'], schema=[RELU, AXPY],
                                    src_files=['src/relu.cpp', 'src/axpy.cpp'], jobs=1),
                         ['build/relu.packed.so'])
        inc = self.inc()
        self.assertEqual(self.logged(), [
            f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {inc} -o build/relu.o src/relu.cpp',
            f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {inc} -o build/axpy.o src/axpy.cpp',
            f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {inc} -o build/wrapper.o build/wrapper.cpp',
            f'xt-clang++ {CC_OPT} {CORE} {inc} -o build/relu.so build/relu.o build/axpy.o build/wrapper.o {self.libs("_single")}',
            f'xt-pkg-loadlib -e lib_func {CORE} -o build/relu.packed.so -s build/relu.stripped.so build/relu.so'])
        with open(os.path.join(tap.TOP, 'tests/golden/relu_axpy.xtensa.cpp')) as stream:
            self.assertEqual(self.read('build/wrapper.cpp'), stream.read())

    def test_an_extension_of_the_name_is_dropped(self):
        self.assertEqual(self.build(name='relu.so'), ['build/relu.packed.so'])

    def test_multicore_returns_eight_packed_libraries(self):
        self.assertEqual(self.build(multicore=True, build_directory='out'),
                         [f'out/relu_cpu{core}.packed.so' for core in range(8)])
        links = sorted(line for line in self.logged() if ' -mlsp=' in line)
        self.assertEqual(links, [
            f'xt-clang++ {CC_OPT} {CORE} {self.inc()} -o out/relu_cpu{core}.so out/relu.o '
            f'out/wrapper.o {self.libs(core)}' for core in range(8)])

    def test_multicore_positionally(self):
        with Quiet():
            result = build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'], [RELU], 'b',
                                             [], [], True, False)
        self.assertEqual(len(result), 8)
        self.assertEqual(result[7], 'b/relu_cpu7.packed.so')

    def test_dash_g_returns_the_linked_library_unpacked(self):
        self.assertEqual(self.build(cflags=['-g']), ['build/relu.so'])
        self.assertEqual([line for line in self.logged() if 'xt-pkg-loadlib' in line], [])

    def test_dash_g_multicore(self):
        self.assertEqual(self.build(cflags=['-g'], multicore=True),
                         [f'build/relu_cpu{core}.so' for core in range(8)])

    def test_only_the_word_dash_g_skips_packing(self):
        self.assertEqual(self.build(cflags=['-ggdb']), ['build/relu.packed.so'])

    def test_dash_g_counts_as_a_word_of_an_entry(self):
        # Entries are split into words first: '-O2 -g' holds the word -g.
        self.assertEqual(self.build(cflags=['-O2 -g']), ['build/relu.so'])

    def test_fn_names_none_takes_the_schema_names(self):
        self.assertEqual(self.build(fn_names=None, schema=[RELU, AXPY],
                                    src_files=['src/relu.cpp', 'src/axpy.cpp']),
                         ['build/relu.packed.so'])
        self.assertIn('case 1: return "axpy";', self.read('build/wrapper.cpp'))

    def test_path_objects_are_accepted(self):
        import pathlib
        self.assertEqual(self.build(src_files=[pathlib.Path('src/relu.cpp')],
                                    build_directory=pathlib.Path('p')),
                         ['p/relu.packed.so'])

    def test_the_host_target_builds_with_the_host_sdk(self):
        # A real compile with the host compiler and the host SDK of the tree.
        source = os.path.join(tap.TOP, 'examples/relu/relu.cpp')
        self.assertEqual(self.build(src_files=[source], target='host', jobs=2),
                         ['build/relu.so'])
        self.assertTrue(os.path.getsize('build/relu.so') > 0)
        with open('build/compile_commands.json') as stream:
            self.assertIn(f'-I{tap.TOP}/sdk/host/include', stream.read())
        self.assertEqual(self.logged(), [])

    def test_a_host_build_that_ran_nothing_lists_what_that_rests_on(self):
        # bco_result_settled_path: only a host build that ran no step (and
        # said nothing but its status) lists anything.
        from build_custom_op import _compile
        source = os.path.join(tap.TOP, 'examples/relu/relu.cpp')

        def settled(**keywords):
            arguments = dict(name='relu', fn_names=['relu'], src_files=[source], schema=[RELU],
                             build_directory='build', target='host')
            arguments.update(keywords)
            found = []
            with Quiet(), warnings.catch_warnings():
                warnings.simplefilter('ignore')
                _compile.compile_noting_settled(found, **arguments)
            return found

        self.assertEqual(settled(), [])   # it compiled and linked
        listed = settled()
        self.assertEqual(listed, sorted(set(listed)))
        sdk = os.path.join(os.path.realpath(tap.TOP), 'sdk', 'host')
        compiler = shutil.which('clang++') or shutil.which('c++')
        for path in (source, 'build', 'build/.build-custom-op.log', 'build/relu.ops',
                     'build/relu.so', 'build/relu.o', 'build/relu.d', 'build/wrapper.cpp',
                     'build/wrapper.o', 'build/wrapper.d', sdk, f'{sdk}/include/torch/torch.h',
                     f'{sdk}/include/neuron/wrapper_api.h', f'{sdk}/lib/libcustomop_host.a',
                     f'{sdk}/lib/core_single.o', compiler):
            self.assertIn(path, listed)
        # Each directory of PATH searched before the compiler's, where a
        # compiler put later would be found first.
        for directory in os.environ['PATH'].split(os.pathsep):
            if directory == os.path.dirname(compiler):
                break
            if os.path.isdir(directory):
                self.assertIn(directory, listed)
        for path in ('build/compile_commands.json', 'build/.build-custom-op.lock'):
            self.assertNotIn(path, listed)   # written or touched by every build
        self.assertEqual(settled(verbose=False, dry_run=True), [])
        self.assertEqual(settled(multicore=True, build_directory='eight'), [])
        eight = settled(multicore=True, build_directory='eight')
        for core in range(8):
            self.assertIn(f'eight/relu_cpu{core}.so', eight)
            self.assertIn(f'{sdk}/lib/core_cpu{core}.o', eight)
        # Eight libraries for one, and the seven linked objects of the cores
        # but the first, which the SDK's check already looked at.
        self.assertEqual(len(eight), len(listed) + 7 + 7)
        self.assertEqual(settled(target='xtensa', src_files=['src/relu.cpp'],
                                 build_directory='x'), [])
        self.assertEqual(settled(target='xtensa', src_files=['src/relu.cpp'],
                                 build_directory='x'), [])   # not the host: nothing
        # An input dated in the future draws a warning: nothing listed.
        os.makedirs('src', exist_ok=True)
        shutil.copy(source, 'src/future.cpp')
        later = time.time_ns() + 3600 * 10**9
        os.utime('src/future.cpp', ns=(later, later))
        self.assertEqual(settled(src_files=['src/future.cpp'], build_directory='f'), [])
        self.assertEqual(settled(src_files=['src/future.cpp'], build_directory='f'), [])

    def test_a_second_build_runs_nothing(self):
        self.build()
        os.remove(self.log)
        self.assertEqual(self.build(), ['build/relu.packed.so'])
        self.assertEqual(self.logged(), [])

    def test_the_launcher_keyword(self):
        self.build(launcher='fake-launcher --flag', jobs=1)
        self.assertEqual(self.logged()[0].split(' ', 3)[:3], ['fake-launcher', '--flag',
                                                              'xt-clang++'])

    def test_the_launcher_from_the_environment(self):
        os.environ['CUSTOM_OP_LAUNCHER'] = 'fake-launcher -x'
        self.build(jobs=1)
        self.assertEqual(self.logged()[0].split(' ', 2)[:2], ['fake-launcher', '-x'])

    # --- printing -------------------------------------------------------------

    def test_verbose_with_no_standard_streams(self):
        """Python sets sys.stdout and sys.stderr to None when they are
        closed: what would be printed is dropped, as print() drops it."""
        with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
            artifacts = build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'], [RELU],
                                                'build', verbose=True, jobs=1)
        self.assertEqual(artifacts, ['build/relu.packed.so'])

    def test_verbose_prints_status_and_commands_on_stderr(self):
        with Quiet() as quiet:
            build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'], [RELU], 'build',
                                    verbose=True, jobs=1)
        inc = self.inc()
        self.assertEqual(quiet.out.getvalue(), '')
        self.assertEqual(quiet.err.getvalue().splitlines(), [
            f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {inc} -o build/relu.o src/relu.cpp',
            '[1/4] CC src/relu.cpp',
            f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {inc} -o build/wrapper.o build/wrapper.cpp',
            '[2/4] CC build/wrapper.cpp',
            f'xt-clang++ {CC_OPT} {CORE} {inc} -o build/relu.so build/relu.o build/wrapper.o {self.libs("_single")}',
            '[3/4] LINK build/relu.so',
            f'xt-pkg-loadlib -e lib_func {CORE} -o build/relu.packed.so -s build/relu.stripped.so build/relu.so',
            '[4/4] PACK build/relu.packed.so'])

    def test_dry_run_prints_the_commands_and_runs_none(self):
        with Quiet() as quiet:
            result = build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'], [RELU], 'build',
                                             dry_run=True)
        self.assertEqual(result, ['build/relu.packed.so'])
        self.assertEqual(quiet.err.getvalue(), '')
        lines = quiet.out.getvalue().splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual(lines[0], f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} '
                                   f'{self.inc()} -o build/relu.o src/relu.cpp')
        self.assertEqual(self.logged(), [])
        self.assertFalse(os.path.exists('build/relu.o'))

    def test_a_warning_is_a_python_warning(self):
        schemas = [f'my_ops::op{i}(Tensor x) -> Tensor' for i in range(11)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            text = build_custom_op.generate_wrapper(schemas)
        self.assertIn('int get_func_cnt() {', text)
        self.assertEqual([(w.category, str(w.message)) for w in caught], [
            (build_custom_op.BuildWarning,
             '11 ops in one library; the runtime documents at most 10 functions per library')])
        self.assertEqual(caught[0].filename, __file__)

    def test_a_warning_of_compile_points_at_the_caller(self):
        schemas = [f'my_ops::op{i}(Tensor x) -> Tensor' for i in range(11)]
        with warnings.catch_warnings(record=True) as caught, Quiet():
            warnings.simplefilter('always')
            build_custom_op.compile('ops', None, ['src/relu.cpp'], schemas, 'build', dry_run=True)
        self.assertEqual([(str(w.message), w.filename) for w in caught], [
            ('11 ops in one library; the runtime documents at most 10 functions per library',
             __file__)])

    def test_eleven_ops_for_the_host_are_an_error(self):
        schemas = [f'my_ops::op{i}(Tensor x) -> Tensor' for i in range(11)]
        with self.assertRaises(build_custom_op.BuildError) as caught, Quiet():
            build_custom_op.compile('ops', None, ['src/relu.cpp'], schemas, 'build', dry_run=True,
                                    target='host')
        self.assertEqual((caught.exception.kind, str(caught.exception)), (
            'input', '11 ops in one library, but the device documents at most 10 functions in a '
            'library (and one custom-op library per model), and the host target\'s emulator '
            'refuses more; keep at most 10 ops in the library'))

    # --- errors -----------------------------------------------------------------

    def test_a_bad_schema(self):
        error = self.build_error(fn_names=['relu', 'bad'],
                                 schema=[RELU, 'my_ops::bad(Tensor[] x) -> Tensor'])
        self.assertEqual(error.kind, 'input')
        self.assertEqual(str(error),
                         "schema:13: error: argument 'x' has type 'Tensor[]', which is not "
                         "supported; the supported types are Tensor, Scalar, number, int, float, "
                         "long long\n"
                         "my_ops::bad(Tensor[] x) -> Tensor\n"
                         "            ^")
        self.assertEqual((error.schema_index, error.column), (1, 13))
        self.assertFalse(os.path.exists('build'))

    def test_a_bad_function_name(self):
        error = self.build_error(fn_names=['1bad'])
        self.assertEqual((error.kind, str(error)), (
            'input', "op 1: function name '1bad' is not a C identifier (letters, digits and '_', "
                     "not starting with a digit)"))
        self.assertEqual((error.schema_index, error.column), (0, None))

    def test_more_names_than_schemas(self):
        error = self.build_error(fn_names=['relu', 'axpy'])
        self.assertEqual((error.kind, str(error)), (
            'input', '2 function names but 1 schema: give exactly one function name per schema'))

    def test_an_empty_list_of_names(self):
        error = self.build_error(fn_names=[])
        self.assertEqual(str(error),
                         '0 function names but 1 schema: give exactly one function name per schema')

    def test_no_schema(self):
        error = self.build_error(fn_names=[], schema=[])
        self.assertEqual((error.kind, str(error)), (
            'input', "no ops: give at least one schema, such as 'my_ops::relu(Tensor x) -> Tensor'"))

    def test_an_empty_name(self):
        error = self.build_error(name='')
        self.assertEqual((error.kind, str(error)),
                         ('usage', "no library name: give one, such as 'relu'"))

    def test_a_missing_source(self):
        error = self.build_error(src_files=['src/relu.cpp', 'src/nothere.cpp'])
        self.assertEqual((error.kind, str(error)),
                         ('input', 'cannot read source src/nothere.cpp: No such file or directory'))

    def test_a_missing_tool(self):
        os.environ['PATH'] = '/usr/bin:/bin'
        os.environ.pop('XTENSA_TOOLS', None)
        error = self.build_error()
        self.assertEqual((error.kind, str(error)), (
            'tool',
            'cannot find xt-clang++: looked in PATH, $XTENSA_TOOLS/XtensaTools/bin (XTENSA_TOOLS '
            'is not set) and /opt/aws/neuron/gpsimd/bin.\n'
            'Install the package aws-neuronx-gpsimd-tools, or set XTENSA_TOOLS to the directory '
            'that holds XtensaTools/bin, or add that directory to PATH.'))
        self.assertFalse(os.path.exists('build'))

    def test_a_missing_sdk_file(self):
        os.remove(os.path.join(self.sdk, 'c10/lib/libc10.a'))
        error = self.build_error()
        self.assertEqual((error.kind, str(error)), (
            'tool', f'the Neuron custom-op SDK at {self.sdk} is incomplete: '
                    f'{self.sdk}/c10/lib/libc10.a is missing; set NEURON_CUSTOM_OP or pass --sdk DIR'))

    def test_an_unknown_target(self):
        error = self.build_error(target='arm')
        self.assertEqual((error.kind, str(error)),
                         ('usage', "unknown target 'arm': use xtensa or host"))

    def test_negative_jobs(self):
        error = self.build_error(jobs=-1)
        self.assertEqual(error.kind, 'usage')

    def test_a_failed_step_holds_the_command_and_the_output(self):
        os.environ['FAKE_FAIL'] = 'axpy.o'
        error = self.build_error(fn_names=['relu', 'axpy'], schema=[RELU, AXPY],
                                 src_files=['src/relu.cpp', 'src/axpy.cpp'], jobs=1)
        self.assertEqual(error.kind, 'step')
        self.assertEqual(str(error),
                         'FAILED: build/axpy.o\n'
                         f'xt-clang++ {CC_OPT} -MMD -MP -fpic -mlongcalls -c {CORE} {self.inc()} '
                         '-o build/axpy.o src/axpy.cpp\n'
                         'src/axpy.cpp:1:1: error: fake failure')
        self.assertFalse(os.path.exists('build/axpy.o'))

    def test_keep_going_reports_every_failure(self):
        os.environ['FAKE_FAIL'] = 'u.o'  # relu.o and axpy.o
        error = self.build_error(fn_names=['relu', 'axpy'], schema=[RELU, AXPY],
                                 src_files=['src/relu.cpp', 'src/axpy.cpp'], jobs=1,
                                 keep_going=True)
        self.assertEqual([line for line in str(error).splitlines() if line.startswith('FAILED')],
                         ['FAILED: build/relu.o'])
        os.environ['FAKE_FAIL'] = '.o'
        error = self.build_error(fn_names=['relu', 'axpy'], schema=[RELU, AXPY],
                                 src_files=['src/relu.cpp', 'src/axpy.cpp'], jobs=1,
                                 keep_going=True, build_directory='build2')
        self.assertEqual([line for line in str(error).splitlines() if line.startswith('FAILED')],
                         ['FAILED: build2/relu.o', 'FAILED: build2/axpy.o',
                          'FAILED: build2/wrapper.o'])

    def test_an_undefined_kernel_is_explained(self):
        os.environ['FAKE_UNDEFINED'] = 'relu'
        error = self.build_error(jobs=1)
        self.assertEqual(error.kind, 'step')
        self.assertEqual(str(error).splitlines()[2:], [
            "wrapper.cpp:(.text+0x12): undefined reference to `relu(at::Tensor const&)'",
            'collect2: error: ld returned 1 exit status',
            'relu must be defined as: at::Tensor relu(const at::Tensor&)'])
        self.assertEqual(str(error).splitlines()[0], 'FAILED: build/relu.so')

    def test_a_build_directory_that_cannot_be_made(self):
        self.write('blocker', 'a file\n')
        error = self.build_error(build_directory='blocker/build')
        self.assertEqual((error.kind, str(error)), (
            'input', 'cannot create build directory blocker/build: Not a directory'))

    def test_an_unclosed_quote(self):
        error = self.build_error(cflags=['-DX="a'])
        self.assertEqual((error.kind, str(error)), (
            'input', "cflags entry 1 '-DX=\"a' cannot be split into words: no closing quotation"))

    def test_a_nul_character(self):
        with self.assertRaises(ValueError):
            self.build(cflags=['-DX\0'])

    def test_a_wrong_type(self):
        with self.assertRaises(TypeError):
            self.build(cflags=[None])
        with self.assertRaises(TypeError):
            self.build(jobs='2')

    def test_a_set_is_refused_where_order_counts(self):
        for keyword in ('fn_names', 'src_files', 'schema', 'includes', 'cflags'):
            with self.subTest(argument=keyword):
                value = {'relu'} if keyword == 'fn_names' else {'x'}
                with self.assertRaises(TypeError) as caught:
                    self.build(**{keyword: value})
                self.assertEqual(str(caught.exception),
                                 f'{keyword} must be a list, not a set: a set has no order, and '
                                 f'the order of {keyword} counts')
        with self.assertRaises(TypeError):
            self.build(fn_names=frozenset(['relu']))

    def test_type_errors_name_the_argument(self):
        wrong = dict(name=1, fn_names=1, src_files=[2], schema=[None], build_directory=3.5,
                     includes=[4], cflags=[None], multicore='yes', verbose='yes', jobs='2',
                     target=['host'], launcher=[5], dry_run='no', keep_going=[], sdk=6, core=7,
                     xtensa_system=8)
        for keyword, value in wrong.items():
            with self.subTest(argument=keyword):
                with self.assertRaises(TypeError) as caught:
                    self.build(**{keyword: value})
                self.assertTrue(str(caught.exception).startswith(keyword), str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            self.build(target=['host'])
        self.assertEqual(str(caught.exception), "target must be 'xtensa' or 'host', not list")

    def test_empty_words_are_refused(self):
        error = self.build_error(includes=['inc', '""'])
        self.assertEqual((error.kind, str(error)), (
            'input', "includes entry 2 '\"\"' holds an empty word: an include directory cannot be "
                     "empty (-I alone would take the next compiler argument as its directory)"))
        error = self.build_error(includes=['-isystem', "''"])
        self.assertEqual(error.kind, 'input')
        error = self.build_error(cflags=['-O2', '-D ""'])
        self.assertEqual((error.kind, str(error)), (
            'input', "cflags entry 2 '-D \"\"' holds an empty word: the compiler would take it for "
                     "a file named ''"))
        self.assertEqual(self.logged(), [])

    def test_ldflags_end_every_link_split_as_cflags(self):
        self.assertEqual(self.build(ldflags=['-Wl,-z,now "-L/opt/my libs"'], multicore=True,
                                    jobs=1), [f'build/relu_cpu{core}.packed.so' for core in range(8)])
        links = [line for line in self.logged() if ' -mlsp=' in line]
        self.assertEqual(links, [
            f'xt-clang++ {CC_OPT} {CORE} {self.inc()} -o build/relu_cpu{core}.so build/relu.o '
            f'build/wrapper.o {self.libs(core)} -Wl,-z,now -L/opt/my libs' for core in range(8)])
        self.assertEqual([line for line in self.logged() if '-z,now' in line], links)
        error = self.build_error(ldflags=['-lm', "''"])
        self.assertEqual((error.kind, str(error)), (
            'input', "ldflags entry 2 \"''\" holds an empty word: the linker would take it for a "
                     "file named ''"))

    def test_sanitize_names_the_sanitizers_and_the_host_target(self):
        for sanitize in ('address', ['address', 'undefined'], ('undefined',)):
            error = self.build_error(sanitize=sanitize)
            names = sanitize if isinstance(sanitize, str) else ','.join(sanitize)
            self.assertEqual((error.kind, str(error)), (
                'usage', f"sanitize '{names}': the sanitizers run on the host target only (the "
                         "device has no sanitizer runtime); build with --target host "
                         "(target='host' in Python) and run the op with run-custom-op, or leave "
                         "the sanitizers out"))
        error = self.build_error(sanitize='thread', target='host')
        self.assertEqual((error.kind, str(error)), (
            'usage', "sanitize 'thread': unknown sanitizer 'thread'; the host target has address "
                     "(AddressSanitizer) and undefined (UndefinedBehaviorSanitizer), or both as "
                     "address,undefined"))
        self.assertEqual(self.build(sanitize=[]), ['build/relu.packed.so'])
        with self.assertRaises(TypeError) as caught:
            self.build(sanitize=[1])
        self.assertEqual(str(caught.exception), "sanitize must hold names such as 'address', not int")

    def test_a_megabyte_of_cflags_is_split(self):
        # Split in one pass in C (bco_split_words); bench/ measures that the
        # time grows linearly.
        from build_custom_op import _compile
        cflags = ['-DA=1 "-DB=a b" ' * 70000]
        self.assertGreater(len(cflags[0]), 1000000)
        words = _compile.split_cflags(cflags)
        self.assertEqual((len(words), words[:2], words[-1]), (140000, ['-DA=1', '-DB=a b'], '-DB=a b'))
        long_word = '-DX=' + 'a' * 1000000  # shlex.split took 16 s for this
        self.assertEqual(_compile.split_cflags([long_word]), [long_word])

    def test_the_launcher_is_split_as_the_command_splits_it(self):
        command = os.path.join(tap.TOP, 'build-custom-op')
        for text in ('fake-launcher  -x', "'a b' c", 'x\\ y "q\\"r" \'$HOME\'', 'a\tb\nc',
                     '`x` $(y) ~ *', 'a\\\nb', '"a\\$b\\c"'):
            with self.subTest(launcher=text):
                done = subprocess.run([command, '-n', '--launcher', text, '--name', 'relu', '--op',
                                       RELU, 'src/relu.cpp'], stdout=subprocess.PIPE, check=True)
                arguments = ('relu', ['relu'], ['src/relu.cpp'], [RELU], 'build')
                with Quiet() as quiet:
                    build_custom_op.compile(*arguments, launcher=text, dry_run=True)
                self.assertEqual(quiet.out.getvalue(), done.stdout.decode())
                os.environ['CUSTOM_OP_LAUNCHER'] = text
                with Quiet() as quiet:
                    build_custom_op.compile(*arguments, dry_run=True)
                del os.environ['CUSTOM_OP_LAUNCHER']
                self.assertEqual(quiet.out.getvalue(), done.stdout.decode())

    # --- words -----------------------------------------------------------------

    def argv(self):
        with open(os.environ['FAKE_ARGV']) as stream:
            return stream.readline().rstrip('\n')

    def test_cflags_are_split_as_a_shell_would(self):
        os.environ['FAKE_ARGV'] = os.path.join(self.work, 'argv')
        self.build(cflags=['-DMSG="a b" -O2', "-DQ='c  d'"], jobs=1)
        self.assertIn(f'<{CORE.split()[1]}><-DMSG=a b><-O2><-DQ=c  d><-I{self.sdk}>', self.argv())

    def test_nothing_is_expanded_or_executed(self):
        os.environ['FAKE_ARGV'] = os.path.join(self.work, 'argv')
        self.build(cflags=['-DX=$(touch pwned) `touch pwned2` $HOME ~ *'],
                   includes=['$(touch pwned3)'], jobs=1)
        self.assertIn('<-DX=$(touch><pwned)><`touch><pwned2`><$HOME><~><*>', self.argv())
        self.assertIn('<-I$(touch><-Ipwned3)>', self.argv())
        self.assertEqual(sorted(name for name in os.listdir('.') if name.startswith('pwned')), [])

    def test_includes_are_split_and_bare_directories_become_dash_i(self):
        os.environ['FAKE_ARGV'] = os.path.join(self.work, 'argv')
        self.build(includes=['inc "dir with space"', '-isystem /opt/x', '-iquote q -Ir', '-I',
                             's'], jobs=1)
        self.assertIn('<-Iinc><-Idir with space><-isystem/opt/x><-iquoteq><-Ir><-Is><-o>',
                      self.argv())

    def test_an_include_option_without_its_directory(self):
        error = self.build_error(includes=['inc', '-isystem'])
        self.assertEqual((error.kind, str(error)),
                         ('input', 'includes: -isystem at the end needs an argument'))

    def test_the_default_lists_are_never_changed(self):
        defaults = build_custom_op.compile.__defaults__
        includes, cflags = ['inc'], ['-O2 -g']
        self.build(includes=includes, cflags=cflags)
        self.build()
        self.assertEqual(defaults, ([], [], False, False))
        self.assertEqual((includes, cflags), (['inc'], ['-O2 -g']))

    # --- signals ----------------------------------------------------------------

    def interrupt_when_hung(self, number, stamps):
        """Sends a signal to this process once the fake compiler hangs."""
        def send():
            wait_for_line(stamps, 'hang relu.o')
            os.kill(os.getpid(), number)  # sent even after the limit: never hang the tests
        thread = threading.Thread(target=send)
        thread.start()
        return thread

    def hang(self):
        stamps = os.path.join(self.work, 'stamps')
        os.environ['FAKE_STAMPS'] = stamps
        os.environ['FAKE_HANG'] = 'relu.o'
        return stamps

    def assert_handlers_are_back(self, before):
        self.assertEqual([handler_address(n) for n in (signal.SIGINT, signal.SIGTERM,
                                                       signal.SIGCHLD)], before)

    def assert_no_tool_left(self, stamps):
        pid = int(wait_for_line(stamps, 'hang relu.o', limit=1).split()[2])
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_sigint_raises_keyboard_interrupt(self):
        stamps = self.hang()
        before = [handler_address(n) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)]
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        thread = self.interrupt_when_hung(signal.SIGINT, stamps)
        try:
            with self.assertRaises(KeyboardInterrupt):
                self.build(fn_names=['relu', 'axpy'], schema=[RELU, AXPY],
                           src_files=['src/relu.cpp', 'src/axpy.cpp'], jobs=2)
        finally:
            thread.join()
        self.assertFalse(os.path.exists('build/relu.o'))
        self.assertFalse(os.path.exists('build/relu.packed.so'))
        self.assert_no_tool_left(stamps)
        self.assert_handlers_are_back(before)
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        # Python's own handler really is back: a SIGINT now is a KeyboardInterrupt.
        with self.assertRaises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)

    def test_the_build_after_an_interrupt_succeeds(self):
        stamps = self.hang()
        thread = self.interrupt_when_hung(signal.SIGINT, stamps)
        try:
            with self.assertRaises(KeyboardInterrupt):
                self.build(jobs=2)
        finally:
            thread.join()
        del os.environ['FAKE_HANG']
        self.assertEqual(self.build(), ['build/relu.packed.so'])
        self.assertEqual(self.read('build/relu.o'), 'object of src/relu.cpp\n')

    def test_sigterm_runs_the_python_handler(self):
        class Terminated(Exception):
            pass

        def on_terminate(number, frame):
            raise Terminated(number)

        stamps = self.hang()
        previous = signal.signal(signal.SIGTERM, on_terminate)
        try:
            before = [handler_address(n) for n in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)]
            thread = self.interrupt_when_hung(signal.SIGTERM, stamps)
            try:
                with self.assertRaises(Terminated) as caught:
                    self.build(jobs=2)
            finally:
                thread.join()
            self.assertEqual(caught.exception.args, (signal.SIGTERM,))
            self.assertFalse(os.path.exists('build/relu.o'))
            self.assert_handlers_are_back(before)
        finally:
            signal.signal(signal.SIGTERM, previous)

    def test_sigterm_with_the_default_disposition_ends_the_process(self):
        stamps = self.hang()
        program = ('import sys, build_custom_op\n'
                   'build_custom_op.compile("relu", ["relu"], ["src/relu.cpp"], [sys.argv[1]], "build")\n'
                   'print("returned")\n')
        child = subprocess.Popen([sys.executable, '-c', program, RELU], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE,
                                 env=dict(os.environ, PYTHONPATH=os.path.join(tap.TOP, 'python')))
        wait_for_line(stamps, 'hang relu.o')
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate()
        self.assertEqual((child.returncode, out, err), (-signal.SIGTERM, b'', b''))
        self.assertFalse(os.path.exists('build/relu.o'))
        self.assert_no_tool_left(stamps)

    def test_sigint_while_waiting_for_the_lock_is_not_lost(self):
        # Outside the steps the library has no handler of its own: the
        # signal must still come out as a KeyboardInterrupt, not be printed
        # and dropped inside the progress callback.
        stamps = os.path.join(self.work, 'stamps')
        first = subprocess.Popen(
            [os.path.join(tap.TOP, 'build-custom-op'), '--name', 'relu', '--op', RELU,
             'src/relu.cpp'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, FAKE_HANG='relu.o', FAKE_STAMPS=stamps))
        self.assertIsNotNone(wait_for_line(stamps, 'hang relu.o'))
        tool = int(wait_for_line(stamps, 'hang relu.o').split()[2])
        err = io.StringIO()

        def interrupt_then_release():
            for _ in range(200):
                if 'waiting for another build of build to finish' in err.getvalue():
                    break
                time.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # not a threshold: either order below passes
            first.kill()
            first.wait()
            os.kill(tool, signal.SIGKILL)  # the orphaned tool of the killed build

        thread = threading.Thread(target=interrupt_then_release)
        thread.start()
        try:
            with self.assertRaises(KeyboardInterrupt), contextlib.redirect_stderr(err):
                build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'], [RELU], 'build',
                                        verbose=True)
        finally:
            thread.join()
        self.assertNotIn('Exception ignored', err.getvalue())
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

    def test_sigint_with_an_ignoring_handler_raises_build_error(self):
        stamps = self.hang()
        seen = []
        previous = signal.signal(signal.SIGINT, lambda number, frame: seen.append(number))
        try:
            thread = self.interrupt_when_hung(signal.SIGINT, stamps)
            try:
                error = self.build_error(jobs=2)
            finally:
                thread.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        self.assertEqual((error.kind, error.signal, str(error), seen),
                         ('interrupted', signal.SIGINT, 'interrupted by SIGINT', [signal.SIGINT]))

    def test_ctrl_c_with_compile_in_another_thread_reaches_the_main_thread(self):
        stamps = self.hang()
        outcome = []

        def build():
            try:
                build_custom_op.compile('relu', ['relu', 'axpy'], ['src/relu.cpp', 'src/axpy.cpp'],
                                        [RELU, AXPY], 'build', jobs=2)
            except BaseException as error:  # what the thread's call ended with
                outcome.append(error)

        worker = threading.Thread(target=build)
        worker.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                self.assertIsNotNone(wait_for_line(stamps, 'hang relu.o'))
                os.kill(os.getpid(), signal.SIGINT)
                worker.join()  # the KeyboardInterrupt comes here, in the main thread
                time.sleep(1)  # or just after; never reached when it comes
        finally:
            worker.join()
        self.assertEqual([(type(error), getattr(error, 'kind', None)) for error in outcome],
                         [(BuildError, 'interrupted')])
        self.assertFalse(os.path.exists('build/relu.o'))
        self.assert_no_tool_left(stamps)
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

    # --- repeated calls ---------------------------------------------------------

    def test_repeated_calls_do_not_grow_memory(self):
        def failing():
            try:
                build_custom_op.compile('relu', ['relu'], ['src/relu.cpp'],
                                        ['my_ops::relu(Tensor[] x) -> Tensor'], 'build',
                                        dry_run=True)
            except BuildError as error:
                return error.column
            return None

        def succeeding():
            return build_custom_op.compile('relu', ['relu', 'axpy'],
                                           ['src/relu.cpp', 'src/axpy.cpp'], [RELU, AXPY],
                                           'build', ['inc'], ['-O2 -DX="a b"'], dry_run=True)

        discard = Discard()
        with contextlib.redirect_stdout(discard), contextlib.redirect_stderr(discard):
            for _ in range(200):  # warm up: the allocator reaches its working size
                failing()
                succeeding()
            results = set()
            heap_before = heap_bytes_in_use()
            before = resident_bytes()
            for _ in range(1000):
                results.add(failing())
            for _ in range(1000):
                results.add(tuple(succeeding()))
            after = resident_bytes()
            heap_after = heap_bytes_in_use()
        self.assertEqual(results, {14, ('build/relu.packed.so',)})
        self.assertEqual(self.logged(), [])
        growth = after - before
        sys.stdout.write(f'# resident memory before {before} bytes, after {after} bytes, '
                         f'growth {growth} bytes over 2000 calls\n')
        self.assertLess(growth, 2 * 1024 * 1024)
        if heap_before is not None:
            heap_growth = heap_after - heap_before
            sys.stdout.write(f'# malloc bytes in use before {heap_before}, after {heap_after}, '
                             f'growth {heap_growth} bytes over 2000 calls\n')
            # One leaked block of the smallest size (32 bytes) per call would be 64000.
            self.assertLess(heap_growth, 16 * 1024)


if __name__ == '__main__':
    tap.main()
