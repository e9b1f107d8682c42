"""test_package.py - the modules of build_custom_op depend on each other
without a cycle, each can be imported first in a fresh interpreter, and no
module is hidden behind an attribute of the package of the same name.

The imports counted are every import of a module of the package anywhere
in a module's text, at its top or inside a function (an import made when a
function first runs is a dependency all the same): "from build_custom_op
import X" depends on __init__.py when X is a name __init__.py binds and not
a module, else on the module X; "import build_custom_op" on __init__.py."""

import ast
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
import build_custom_op  # noqa: E402

PACKAGE = 'build_custom_op'
DIRECTORY = os.path.dirname(build_custom_op.__file__)
# Modules that import torch when they are imported.
NEEDS_TORCH = ('custom_op', 'testing', '_host_ops', '_shape_library', '_torch_build',
               '_torch_kit')


def module_names():
    """The modules of the package: '__init__' and the names of the other .py files."""
    return sorted(os.path.splitext(file)[0] for file in os.listdir(DIRECTORY)
                  if file.endswith('.py'))


def dependencies(name, modules):
    """The modules of the package that module name imports, anywhere in its text."""
    with open(os.path.join(DIRECTORY, name + '.py')) as stream:
        tree = ast.parse(stream.read(), name + '.py')
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split('.')
                if parts[0] == PACKAGE:
                    found.add(parts[1] if len(parts) > 1 else '__init__')
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = [PACKAGE] + (node.module.split('.') if node.module else [])
            else:
                parts = (node.module or '').split('.')
            if parts[0] != PACKAGE:
                continue
            if len(parts) > 1:
                found.add(parts[1])
                continue
            for alias in node.names:
                # A name __init__.py binds that is not a module is one of its own.
                own = alias.name not in modules and hasattr(build_custom_op, alias.name)
                found.add('__init__' if own else alias.name)
    found.discard(name)
    return found & set(modules)


def cycles(graph):
    """The import cycles of graph (module -> the modules it imports), each as
    a list of names from a module back to itself."""
    found, state, path = [], {}, []

    def visit(node):
        state[node] = 'open'
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == 'open':
                found.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other)
        path.pop()
        state[node] = 'done'

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


# Run in a fresh interpreter: imports one module first, then every other,
# and prints each module whose name the package binds to something else.
FIRST_IMPORT = '''
import importlib, sys
first, others = sys.argv[1], sys.argv[2:]
importlib.import_module(first)
for name in others:
    importlib.import_module(name)
package = sys.modules['build_custom_op']
for name in [first] + others:
    short = name.rpartition('.')[2]
    if name != 'build_custom_op' and getattr(package, short, None) is not sys.modules[name]:
        print(f'build_custom_op.{short} is {getattr(package, short, None)!r}, not the module')
'''


class PackageTest(unittest.TestCase):
    def test_no_import_cycle(self):
        modules = module_names()
        graph = {name: dependencies(name, modules) for name in modules}
        self.assertEqual([' -> '.join(cycle) for cycle in cycles(graph)], [])

    def test_the_cycle_check_finds_a_cycle(self):
        graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
        self.assertEqual(cycles(graph), [['a', 'b', 'c', 'a']])
        self.assertEqual(cycles({'a': {'b'}, 'b': set(), 'c': {'a', 'b'}}), [])

    def test_each_module_imports_first_in_a_fresh_interpreter(self):
        python = tap.torch_python()
        modules = [name for name in module_names()
                   if python is not None or name not in NEEDS_TORCH]
        full = [PACKAGE if name == '__init__' else f'{PACKAGE}.{name}' for name in modules]
        # After the first, the modules without torch (each that imports torch
        # is first once): a fresh PyTorch per module would take minutes.
        light = [PACKAGE if name == '__init__' else f'{PACKAGE}.{name}' for name in modules
                 if name not in NEEDS_TORCH]
        environment = dict(os.environ, PYTHONPATH=tap.PACKAGE_DIRECTORY)
        for first in full:
            with self.subTest(first=first):
                done = subprocess.run([python or sys.executable, '-c', FIRST_IMPORT, first] +
                                      [name for name in light if name != first],
                                      env=environment, capture_output=True, text=True)
                self.assertEqual((done.returncode, done.stderr, done.stdout), (0, '', ''))
        if python is None:
            self.skipTest(f'the modules that import torch ({", ".join(NEEDS_TORCH)}) need an '
                          f'interpreter with PyTorch: {tap.TORCH_INSTALL}')

    def test_no_module_is_shadowed(self):
        """build_custom_op.X is the module X.py wherever both exist, after
        importing only the package."""
        import importlib
        import types
        for name in module_names():
            if name in ('__init__', '__main__') or not hasattr(build_custom_op, name):
                continue
            with self.subTest(module=name):
                self.assertIsInstance(getattr(build_custom_op, name), types.ModuleType)
                self.assertIs(getattr(build_custom_op, name),
                              importlib.import_module(f'{PACKAGE}.{name}'))


if __name__ == '__main__':
    tap.main()
