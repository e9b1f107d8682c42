"""test_register.py - torchneuron/register.h: the C functions that load()
reads, with several shape sources and namespaces in one library, two
libraries in one process, names longer than the caller's buffer, and a
registration that PyTorch refuses."""

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

libraries = {}


def setUpModule():
    from build_custom_op import _shape_library
    libraries['fixture'], _ = _shape_library.build_and_load(
        'fixture', fixture.SHAPES, fixture.FLAGS, fixture.INCLUDES, False)
    libraries['other'], _ = _shape_library.build_and_load(
        'other', fixture.OTHER_SHAPES, [], [], False)


def opened(path):
    library = ctypes.CDLL(path)
    library.getNamespace.restype = ctypes.c_char_p
    library.getNamespace.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    library.getNumNeuronOps.argtypes = [ctypes.c_int]
    for name in ('getNeuronOpName', 'getNeuronFnName', 'getNeuronOpSource'):
        getattr(library, name).restype = ctypes.c_char_p
        getattr(library, name).argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.c_size_t]
    library.getNeuronRegistrationError.restype = ctypes.c_char_p
    library.getNeuronRegistrationError.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return library


def records(library, size=4096):
    """[(namespace, [(op, fn, source)])] through the C functions."""
    buffer = ctypes.create_string_buffer(size)
    found = []
    for i in range(library.getNumNamespaces()):
        namespace = library.getNamespace(i, buffer, size).decode()
        ops = []
        for j in range(library.getNumNeuronOps(i)):
            ops.append((library.getNeuronOpName(i, j, buffer, size).decode(),
                        library.getNeuronFnName(i, j, buffer, size).decode(),
                        library.getNeuronOpSource(i, j, buffer, size).decode()))
        found.append((namespace, ops))
    return found


def source(name, text):
    path = os.path.join(fixture.FIXTURES, name)
    return f'{path}:{fixture.line_of(path, text)}'


FIXTURE_RECORDS = [
    ('test_ops', [
        ('scale', 'scale', source('shape_ops.cpp', '"scale", &scale_shape')),
        ('row_sums', 'row_sums', source('shape_ops.cpp', '"row_sums", &row_sums_shape')),
        ('fault', 'fault', source('shape_ops.cpp', '"fault", &fault_shape')),
        ('twice', 'twice', source('shape_more.cpp', '"twice", &negate_shape')),
    ]),
    ('test_more', [
        ('negate', 'negate', source('shape_more.cpp', '"negate", &negate_shape')),
        (fixture.LONG_OP, 'long_named', source('shape_more.cpp', 'm.def("a_name_of_one')),
    ]),
]


class RegisterTest(unittest.TestCase):
    def test_a_library_with_two_namespaces(self):
        found = records(opened(libraries['fixture']))
        self.assertEqual([namespace for namespace, _ in found], ['test_ops', 'test_more'])
        self.assertEqual(found, FIXTURE_RECORDS)

    def test_several_shape_sources_in_one_library(self):
        # Both sources include register.h and hold NEURON_LIBRARY blocks; the
        # second adds "twice" to the namespace the first defines.
        library = opened(libraries['fixture'])
        sources = {op[2].rsplit(':', 1)[0] for _, ops in records(library) for op in ops}
        self.assertEqual(sources, set(fixture.SHAPES))
        import torch
        self.assertEqual(str(torch._C._get_schema('test_ops::twice', '')),
                         'test_ops::twice(Tensor _0) -> Tensor _0')
        self.assertIsNone(library.getNeuronRegistrationError(ctypes.create_string_buffer(256),
                                                             256))

    def test_two_libraries_in_one_process_each_see_their_own_ops(self):
        other = opened(libraries['other'])
        first = opened(libraries['fixture'])
        self.assertEqual(records(other), [('test_other', [
            ('only_here', 'only_here', source('shape_other.cpp', '"only_here"'))])])
        self.assertEqual(records(first), FIXTURE_RECORDS)
        import torch
        self.assertTrue(hasattr(torch.ops.test_other, 'only_here'))
        self.assertTrue(hasattr(torch.ops.test_ops, 'scale'))

    def test_a_name_longer_than_the_buffer_returns_null(self):
        library = opened(libraries['fixture'])
        for size, expected in ((128, None), (140, None), (141, fixture.LONG_OP.encode())):
            with self.subTest(size=size):
                buffer = ctypes.create_string_buffer(size)
                self.assertEqual(library.getNeuronOpName(1, 1, buffer, size), expected)
        for size, expected in ((8, None), (9, b'test_ops')):
            with self.subTest(namespace_buffer=size):
                buffer = ctypes.create_string_buffer(size)
                self.assertEqual(library.getNamespace(0, buffer, size), expected)
        buffer = ctypes.create_string_buffer(5)
        self.assertEqual(library.getNeuronFnName(0, 0, buffer, 5), None)   # "scale"
        self.assertEqual(library.getNeuronFnName(0, 0, buffer, 6), b'scale')
        self.assertEqual(library.getNeuronFnName(0, 0, None, 6), None)

    def test_indices_out_of_range(self):
        library = opened(libraries['fixture'])
        buffer = ctypes.create_string_buffer(128)
        self.assertEqual(library.getNamespace(2, buffer, 128), None)
        self.assertEqual(library.getNamespace(-1, buffer, 128), None)
        self.assertEqual(library.getNumNeuronOps(2), 0)
        self.assertEqual(library.getNeuronOpName(0, 4, buffer, 128), None)
        self.assertEqual(library.getNeuronFnName(5, 0, buffer, 128), None)

    def test_the_schemas_as_the_original_formats_them(self):
        from build_custom_op import _shape_library
        ops = _shape_library.read_ops(libraries['fixture'])
        self.assertEqual([(op.namespace, op.op, op.fn, _shape_library.schema_string(op))
                          for op in ops], fixture.OPS)

    def test_a_registration_pytorch_refuses_is_reported_not_thrown(self):
        # A second copy of the library defines test_ops again in this
        # process: PyTorch refuses, and the copy loads and says so.
        work = tempfile.mkdtemp(prefix='bco-register-test.')
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        copy = os.path.join(work, 'copy.so')
        shutil.copy(libraries['fixture'], copy)
        library = opened(copy)
        buffer = ctypes.create_string_buffer(1024)
        error = library.getNeuronRegistrationError(buffer, 1024).decode()
        self.assertTrue(error.startswith(source('shape_ops.cpp', 'NEURON_LIBRARY(test_ops')
                                         + ': namespace test_ops: Only a single TORCH_LIBRARY '
                                         'can be used to register the namespace test_ops'),
                        error)
        self.assertEqual(library.getNeuronRegistrationError(buffer, 20), error[:19].encode())
        from build_custom_op import _shape_library
        with self.assertRaises(_shape_library.ShapeLibraryError) as caught:
            _shape_library.read_ops(copy)
        self.assertEqual(str(caught.exception),
                         f'{copy}: PyTorch refused a registration: {error}. A namespace can be '
                         'defined by one shape library of a process: if another shape library '
                         'defines it, give each NEURON_LIBRARY a namespace of its own (or '
                         'register all of the namespace\'s ops in one library); if an earlier '
                         'version of this shape library is loaded, start a new Python process')

    def test_register_h_and_the_bridge_are_found_in_the_tree_and_installed(self):
        from build_custom_op import _shape_library
        # The tree's, or, run against a package pip installed, the environment's.
        self.assertEqual(_shape_library.include_directory(),
                         os.path.join(sys.prefix, 'include') if tap.INSTALLED else
                         os.path.join(fixture.TOP, 'sdk', 'torchneuron', 'include'))
        work = tempfile.mkdtemp(prefix='bco-register-test.')
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        prefix = os.path.join(work, 'prefix')
        # A make of its own, not a part of the make that runs the tests
        # (whose jobserver it would not get).
        alone = {key: value for key, value in os.environ.items()
                 if key not in ('MAKEFLAGS', 'MFLAGS', 'MAKELEVEL')}
        done = subprocess.run(['make', '-s', '--no-print-directory', '-C', fixture.TOP,
                               'install-torchneuron', 'install-run-custom-op',
                               'PREFIX=' + prefix, 'DESTDIR='],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=alone)
        self.assertEqual((done.returncode, done.stdout), (0, ''))
        with open(os.path.join(prefix, 'include', 'torchneuron', 'register.h')) as stream:
            with open(os.path.join(_shape_library.include_directory(), 'torchneuron',
                                   'register.h')) as original:
                self.assertEqual(stream.read(), original.read())
        code = ('from build_custom_op import _host_ops, _shape_library\n'
                'print(_shape_library.include_directory())\n'
                'print(*_host_ops._bridge_files())\n')
        environment = dict(os.environ,
                           PYTHONPATH=os.path.join(prefix, 'lib', 'python3', 'dist-packages'))
        environment.pop('BUILD_CUSTOM_OP_INCLUDE', None)
        done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                              env=environment, cwd=work)
        include = os.path.join(prefix, 'include')
        bridge = os.path.join(prefix, 'share', 'build-custom-op', 'torch_bridge.cpp')
        self.assertEqual((done.returncode, done.stdout), (0, f'{include}\n{bridge} {include}\n'),
                         done.stderr)


if __name__ == '__main__':
    tap.main(needs_torch=True)
