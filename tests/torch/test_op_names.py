"""test_op_names.py - custom_op.load() checks the op and compute function
names that the shape sources give m.def, and their count, as compile() will,
before the shape library is built: a name the wrapper cannot take, or more
than 10 ops for the host target, fails at once, naming the m.def and the
way to rename the kernel function.  Sources that passed for a target are
not checked again until they change.  (test_sweep.py builds and runs
softmax_t, a name ending in _t.)"""

import os
import shutil
import sys
import tempfile
import time
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402  (the environment the torch tests share)
import tap  # noqa: E402

HEADER = '''#include <torch/torch.h>
#include "torchneuron/register.h"
torch::Tensor same_shape(torch::Tensor x) { return torch::empty(x.sizes(), torch::kFloat); }
'''


class Built(Exception):
    """The shape library's build was reached: the names passed."""


class OpNamesTest(unittest.TestCase):
    def setUp(self):
        from build_custom_op import custom_op
        from build_custom_op import _shape_library
        self.custom_op = custom_op
        self.work = tempfile.mkdtemp(prefix='bco-op-names-test.')
        self.kernel = os.path.join(self.work, 'kernel.cpp')
        with open(self.kernel, 'w') as stream:
            stream.write('// never compiled\n')
        self.shape_library = _shape_library
        self.real_build = _shape_library.build_and_load

        def build_and_load(*arguments):
            raise Built()
        _shape_library.build_and_load = build_and_load

    def tearDown(self):
        self.shape_library.build_and_load = self.real_build
        shutil.rmtree(self.work, ignore_errors=True)

    def shape(self, body):
        path = os.path.join(self.work, 'shape.cpp')
        with open(path, 'w') as stream:
            stream.write(HEADER + body)
        return path

    def load(self, shape, target='host'):
        self.custom_op.load('names', [self.kernel], [shape], target=target)

    def refusal(self, shape, target='host'):
        with self.assertRaises(self.custom_op.CustomOpError) as caught:
            self.load(shape, target)
        return caught.exception

    def test_a_kernel_api_name_is_refused_before_the_build(self):
        shape = self.shape('NEURON_LIBRARY(my_ops, m)\n{\n'
                           '    m.def("softmax_t", &same_shape, "softmax_t");\n'
                           '    m.def("abs", &same_shape,\n          "abs");\n}\n')
        error = self.refusal(shape)
        self.assertEqual((error.step, error.path), ('checking the ops of the shape sources', shape))
        self.assertEqual(str(error), (
            f"load('names'): step 1 of 6, checking the ops of the shape sources [{shape}]: "
            f'{shape}:7: m.def("abs", ..., "abs"): function name \'abs\' is also at::abs of the '
            "kernel API: the wrapper's call abs(...) with a Tensor argument would be ambiguous "
            "(argument-dependent lookup finds both); rename the kernel function, for example to "
            "'abs_kernel' (FN=abs_kernel in --op, in fn_names, or m.def(\"abs\", SHAPE_FUNCTION, "
            '"abs_kernel") in a shape library)'))

    def test_a_name_the_headers_declare_is_refused(self):
        shape = self.shape('NEURON_LIBRARY(my_ops, m) { m.def("softmax", &same_shape, "size_t"); }\n')
        self.assertIn('m.def("softmax", ..., "size_t"): function name \'size_t\' is a type, '
                      'variable, constant, namespace or macro that the SDK\'s or the C library\'s '
                      'headers declare, so the wrapper would not compile; rename the kernel '
                      "function, for example to 'size_t_kernel' (FN=size_t_kernel in --op, in "
                      'fn_names, or m.def("softmax", SHAPE_FUNCTION, "size_t_kernel") in a shape '
                      'library)', str(self.refusal(shape)))

    def test_good_names_reach_the_build(self):
        shape = self.shape('// m.def("abs", &same_shape, "abs");\n'
                           '/* m.def("abs", &same_shape, "abs"); */\n'
                           '#define NAME "abs"\n'
                           'NEURON_LIBRARY(my_ops, m)\n{\n'
                           '    m.def("softmax_t", &same_shape, "softmax_t");\n'
                           '    m.def(NAME, &same_shape, NAME);\n}\n')
        with self.assertRaises(Built, msg='names in comments and from macros are not checked here'):
            self.load(shape)

    def test_eleven_ops_for_the_host_are_refused_before_the_build(self):
        shape = self.shape('NEURON_LIBRARY(my_ops, m)\n{\n' + ''.join(
            f'    m.def("op{i}", &same_shape, "op{i}");\n' for i in range(11)) + '}\n')
        error = self.refusal(shape)
        self.assertEqual(str(error), (
            f"load('names'): step 1 of 6, checking the ops of the shape sources [{shape}]: 11 ops "
            'in one library, but the device documents at most 10 functions in a library (and one '
            "custom-op library per model), and the host target's emulator refuses more; keep at "
            'most 10 ops in the library'))
        with self.assertRaises(Built, msg='the device only warns (at step 4, as compile() does)'):
            self.load(shape, target='xtensa')

    def test_sources_that_passed_are_checked_again_only_when_changed(self):
        """Once shape sources passed the check for a target, a load() of the
        same sources for that target does not check them again (the cache
        records it, under a key of their contents, known by their stat
        fingerprints); a source changed since, even with its size and mtime
        put back, is checked again, and so are the same sources for another
        target."""
        from build_custom_op import _op_names
        cache = mock.patch.dict(os.environ,
                                {'BUILD_CUSTOM_OP_CACHE': os.path.join(self.work, 'cache')})
        cache.start()
        self.addCleanup(cache.stop)
        read = fixture.files_read_again(self)
        checked = []
        real_check = _op_names.check
        self.addCleanup(setattr, _op_names, 'check', real_check)

        def check(paths, target):
            checked.append(target)
            return real_check(paths, target)
        _op_names.check = check

        def load(shape, target='host'):
            time.sleep(0.05)   # past the tick of the last change
            del read[:]
            with self.assertRaises(Built):
                self.load(shape, target)

        shape = self.shape('NEURON_LIBRARY(my_ops, m) { m.def("abz", &same_shape, "abz"); }\n')
        load(shape)
        load(shape)
        load(shape)
        self.assertEqual(checked, ['host'])
        self.assertEqual(read, [])
        info = os.stat(shape)
        with open(shape, 'r+') as stream:
            text = stream.read().replace('"abz"', '"abs"')
            stream.seek(0)
            stream.write(text)
        os.utime(shape, ns=(info.st_atime_ns, info.st_mtime_ns))
        self.assertEqual((os.stat(shape).st_size, os.stat(shape).st_mtime_ns),
                         (info.st_size, info.st_mtime_ns))
        time.sleep(0.05)
        del read[:]
        error = self.refusal(shape)
        self.assertEqual((error.step, error.path), ('checking the ops of the shape sources', shape))
        self.assertIn('function name \'abs\' is also at::abs of the kernel API', str(error))
        self.assertEqual(read, [shape])
        self.assertEqual(checked, ['host', 'host'])

        eleven = self.shape('NEURON_LIBRARY(my_ops, m)\n{\n' + ''.join(
            f'    m.def("op{i}", &same_shape, "op{i}");\n' for i in range(11)) + '}\n')
        load(eleven, 'xtensa')
        load(eleven, 'xtensa')
        self.assertIn('11 ops in one library', str(self.refusal(eleven)))
        self.assertEqual(checked, ['host', 'host', 'xtensa', 'host'])


if __name__ == '__main__':
    tap.main(needs_torch=True)
