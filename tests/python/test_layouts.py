"""test_layouts.py - every ctypes.Structure of build_custom_op
(_build_binding.py, _run_types.py, _profile.py) has the layout of the C
structure it copies: the same field names at the same offsets with the same
sizes, and the same size.  A C program made here from the headers
(include/buildcustomop.h, include/runcustomop.h) prints offsetof and sizeof
of each field the Python side names; a name the C structure lacks fails its
compile."""

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from build_custom_op import _build_binding, _profile, _run_types  # noqa: E402

# Each Python structure and the C structure it copies.
COPIES = {
    (_build_binding, 'Request'): 'struct bco_request',
    (_run_types, '_Tensor'): 'struct rco_tensor',
    (_run_types, '_Argument'): 'struct rco_argument',
    (_run_types, '_Error'): 'struct rco_error',
    (_run_types, '_Options'): 'struct rco_options',
    (_run_types, '_DtypeInfo'): 'struct rco_dtype_info',
    (_run_types, '_TensorDescription'): 'struct rco_tensor_description',
    (_profile, '_CoreStruct'): 'struct rco_core_profile',
    (_profile, '_HintStruct'): 'struct rco_profile_hint',
    (_profile, '_ProfileStruct'): 'struct rco_profile',
}


def structures(module):
    """The names of the ctypes.Structure classes that module defines."""
    return sorted(name for name, value in vars(module).items()
                  if isinstance(value, type) and issubclass(value, ctypes.Structure)
                  and value.__module__ == module.__name__)


def python_layout(structure):
    """Lines 'size N' and 'FIELD OFFSET SIZE', as the C program prints them."""
    lines = [f'size {ctypes.sizeof(structure)}']
    for field in structure._fields_:
        name = field[0]
        descriptor = getattr(structure, name)
        lines.append(f'{name} {descriptor.offset} {descriptor.size}')
    return lines


def c_program():
    """A C program that prints, for each structure of COPIES in its order,
    a line '= C-NAME' and then the lines of python_layout for the C side."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "buildcustomop.h"',
             '#include "runcustomop.h"', 'int main(void)', '{']
    for (module, name), c_name in COPIES.items():
        structure = getattr(module, name)
        lines.append(f'\tprintf("= {c_name}\\nsize %zu\\n", sizeof({c_name}));')
        for field in structure._fields_:
            field_name = field[0]
            lines.append(f'\tprintf("{field_name} %zu %zu\\n", offsetof({c_name}, {field_name}), '
                         f'sizeof((({c_name} *)0)->{field_name}));')
    lines += ['\treturn 0;', '}', '']
    return '\n'.join(lines)


class LayoutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix='bco-layout-test.')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_every_structure_is_compared(self):
        for module in (_build_binding, _run_types, _profile):
            with self.subTest(module=module.__name__):
                self.assertEqual(structures(module),
                                 sorted(name for copied, name in COPIES if copied is module))

    def test_the_layouts_are_those_of_the_headers(self):
        source = os.path.join(self.work, 'layouts.c')
        program = os.path.join(self.work, 'layouts')
        with open(source, 'w') as stream:
            stream.write(c_program())
        compiler = os.environ.get('CC', 'cc')
        done = subprocess.run([compiler, '-std=c11', '-D_POSIX_C_SOURCE=200809L',
                               '-I' + os.path.join(tap.TOP, 'include'), '-o', program, source],
                              capture_output=True, text=True)
        self.assertEqual((done.returncode, done.stderr), (0, ''))
        done = subprocess.run([program], capture_output=True, text=True, check=True)
        printed = {}
        for block in done.stdout.split('= ')[1:]:
            c_name, _, rest = block.partition('\n')
            printed[c_name] = rest.splitlines()
        for (module, name), c_name in COPIES.items():
            with self.subTest(structure=f'{module.__name__}.{name}', copies=c_name):
                self.assertEqual(python_layout(getattr(module, name)), printed[c_name])


if __name__ == '__main__':
    tap.main()
