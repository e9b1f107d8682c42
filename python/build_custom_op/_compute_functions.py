"""_compute_functions.py - which compute function of custom_op.load() is
missing, when the link of the compute library fails.

The generated wrapper declares each compute function with the signature the
op's schema gives it ("at::Tensor relu_forward(const at::Tensor&)") and
calls it; a function that no compute source defines, or defines with other
parameters, leaves that call undefined, and all the user would see is the
linker's "undefined reference".  After a failed link this module reads the
objects the build left (ELF symbol tables: the wrapper's undefined
references and each compute object's definitions) and says, per op, what is
wrong; when the objects are not ELF it reads the linker's messages.
"""

import os
import re
import shutil
import subprocess

from build_custom_op import _elf


def _symbols(path):
    """(defined, undefined): the global symbol names of an ELF object, or
    None when path is not an ELF file this reader understands."""
    try:
        with open(path, 'rb') as stream:
            table = _elf.symbols(stream.read())
    except OSError:
        return None
    if table is None:
        return None
    defined, undefined = set(), set()
    for symbol in table:
        if symbol.binding == _elf.STB_LOCAL or not symbol.name:
            continue
        name = symbol.name.decode('utf-8', 'replace')
        (undefined if symbol.section == _elf.SHN_UNDEF else defined).add(name)
    return defined, undefined


def _demangle(names):
    """Names as c++filt shows them, when c++filt is on PATH."""
    tool = shutil.which('c++filt')
    if not tool or not names:
        return dict(zip(names, names))
    try:
        done = subprocess.run([tool], input='\n'.join(names) + '\n', capture_output=True,
                              text=True, timeout=30)
        shown = done.stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return dict(zip(names, names))
    if done.returncode != 0 or len(shown) != len(names):
        return dict(zip(names, names))
    return dict(zip(names, shown))


def declarations(wrapper_text):
    """{function: "at::Tensor function(PARAMETERS)"} from the wrapper's
    forward declarations."""
    found = {}
    for match in re.finditer(r'^at::Tensor (\w+)\((.*)\);$', wrapper_text, re.M):
        found[match.group(1)] = f'at::Tensor {match.group(1)}({match.group(2)})'
    return found


def _mangled_prefix(function):
    # A function of the global namespace: _Z, then the length and the name.
    return f'_Z{len(function)}{function}'


def diagnose(build_directory, sources, ops, wrapper_text, link_output):
    """For a failed link: a list of (op, problem) for the compute functions
    that are missing or have other parameters, problem saying what the
    sources define instead.  [] when the failure is something else."""
    wanted = declarations(wrapper_text)
    objects = []
    for source in sources:
        base = os.path.splitext(os.path.basename(os.fspath(source)))[0]
        objects.append((os.fspath(source), os.path.join(build_directory, base + '.o')))
    wrapper = _symbols(os.path.join(build_directory, 'wrapper.o'))
    tables = [(source, _symbols(path)) for source, path in objects]
    problems = []
    if wrapper is not None and all(table is not None for _, table in tables):
        found_elsewhere = []
        for op in ops:
            prefix = _mangled_prefix(op.fn)
            expected = sorted(name for name in wrapper[1] if name.startswith(prefix))
            if not expected or any(expected[0] in table[0] for _, table in tables):
                continue
            others = [(source, name) for source, table in tables for name in sorted(table[0])
                      if name == op.fn or (name.startswith(prefix) and name != expected[0])]
            found_elsewhere.append((op, others))
        shown = _demangle(sorted({name for _, others in found_elsewhere for _, name in others}))
        for op, others in found_elsewhere:
            if not others:
                problems.append((op, 'no compute source defines it'))
                continue
            what = []
            for source, name in others:
                if name == op.fn:
                    what.append(f'{source} defines {op.fn} with C linkage (extern "C")')
                else:
                    what.append(f'{source} defines {shown.get(name, name)}')
            problems.append((op, '; '.join(what) + ', which is another function'))
        return [(op, problem, wanted.get(op.fn)) for op, problem in problems]
    # Objects this module cannot read: go by the linker's messages.
    undefined = set(re.findall(r"undefined reference to [`'](\w+)\(", link_output))
    return [(op, 'no compute source defines it (the link reports an undefined reference)',
             wanted.get(op.fn)) for op in ops if op.fn in undefined]


def message(problems, sources):
    """The error text for diagnose()'s problems."""
    lines = []
    listed = ', '.join(os.fspath(source) for source in sources)
    for op, problem, declaration in problems:
        where = f' (registered at {op.source})' if op.source else ''
        lines.append(f'op {op.qualified}{where} runs the compute function {op.fn}, but {problem}.')
        if declaration:
            lines.append(f'  It must be defined in one of the compute sources ({listed}) as:')
            lines.append(f'    {declaration}')
    return '\n'.join(lines)
