"""kernel_api.py - the functions the host SDK declares in namespace at (and
so in torch, which takes at's names): one line per name, "NAME<TAB>ARGS",
where ARGS is an argument list in schema types that makes a call NAME(...)
with those arguments find an at:: overload as good as the kernel's own
declaration (so the wrapper's call is ambiguous), or "-" when no overload
can be called that way.

An overload qualifies when each parameter without a default is
const Tensor& (Tensor), const Scalar& (Scalar), int, float or long long,
and one of them is a Tensor or a Scalar, so that argument-dependent lookup
finds it.  With --namespaces, prints instead the namespaces the headers
open at global scope, one per line.
Usage: python3 kernel_api.py [--namespaces] INCLUDE_DIR"""

import os
import re
import sys

PARAMETER_KINDS = {
    'const Tensor &': 'Tensor', 'const Tensor&': 'Tensor', 'const at::Tensor &': 'Tensor',
    'const Scalar &': 'Scalar', 'const Scalar&': 'Scalar', 'const c10::Scalar &': 'Scalar',
    'int': 'int', 'float': 'float', 'long long': 'long long',
}
DECLARATION = re.compile(r'^\s*(?:inline\s+|static\s+)?[A-Za-z_][\w:<>,\s]*?[\s&*]+'
                         r'([A-Za-z_]\w*)\s*\(([^()]*)\)\s*(?:const\s*)?[;{]')


def namespace_scope_declarations(text):
    """(namespace path, line) for each line at namespace scope (outside any
    class, function or other braces)."""
    text = re.sub(r'//[^\n]*|/\*.*?\*/', '', text, flags=re.S)
    scopes = []  # one entry per open brace: a namespace name, or None
    for line in text.split('\n'):
        if all(scope is not None for scope in scopes):
            yield tuple(scopes), line
        for match in re.finditer(r'namespace\s+(\w+)\s*\{|[{}]', line):
            if match.group(0) == '}':
                if scopes:
                    scopes.pop()
            else:
                scopes.append(match.group(1))


def witness(parameters):
    kinds = []
    for parameter in [p.strip() for p in parameters.split(',') if p.strip()]:
        if '=' in parameter:
            break
        kind = PARAMETER_KINDS.get(re.sub(r'\s*\b\w+$', '', parameter).strip())
        if kind is None:
            return None
        kinds.append(kind)
    if not any(kind in ('Tensor', 'Scalar') for kind in kinds):
        return None
    return ', '.join(f'{kind} a{i}' for i, kind in enumerate(kinds))


def global_namespaces(text):
    for scopes, line in namespace_scope_declarations(text):
        if not scopes:
            yield from re.findall(r'namespace\s+(\w+)\s*\{', line)


def main():
    found = {}
    namespaces = set()
    for directory, _, files in os.walk(sys.argv[-1]):
        for name in files:
            with open(os.path.join(directory, name)) as stream:
                text = stream.read()
            namespaces.update(global_namespaces(text))
            for scopes, line in namespace_scope_declarations(text):
                if scopes not in (('at',), ('torch',)):
                    continue
                match = DECLARATION.match(line)
                if not match or match.group(1) == 'operator':
                    continue
                args = witness(match.group(2))
                if found.get(match.group(1)) is None:
                    found[match.group(1)] = args
    if sys.argv[1] == '--namespaces':
        print('\n'.join(sorted(namespaces)))
        return
    for name in sorted(found):
        print(f'{name}\t{found[name] or "-"}')


main()
