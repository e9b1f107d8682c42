"""_op_names.py - custom_op.load()'s look at the op and compute function
names of the shape sources before anything is compiled.

The names are known for sure only from the shape library's registry, which
exists once the library is built (about 25 s) and loaded; compile() then
checks them (step 4).  A name that the wrapper cannot take would fail there
after that build.  So load() first reads the shape sources for each
``m.def("op", shape_function, "compute_function")`` whose two names are
string literals (comments left out) and has build_custom_op check those
names, with the op count, as compile() will: the same rules and messages,
from the C library, before the shape library is built.  A registration the
reading does not find (names from macros or variables) is checked at step 4
as before; one it finds that the build would not register (inside #if 0) is
checked all the same.

The check's result depends only on the shape sources, the target, this
file and the library that checks the names: load() keeps a record under a
key of those once the check has passed (custom_op._op_names_identity), and
does not check the same sources again, nor imports this module (a changed
source, or another target, is another key).
The patterns below are compiled when a check first runs, not on import.

No torch here.
"""

import re
import warnings

import build_custom_op

# A string literal, a comment, or anything else up to the next of those.
_TOKENS = r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/'
# m.def("op", shape function, "compute function") with literal names.
_DEFINITION = r'\bdef\s*\(\s*"((?:[^"\\\n]|\\.)*)"\s*,[^;]*?,\s*"((?:[^"\\\n]|\\.)*)"\s*\)'
_IDENTIFIER = r'[A-Za-z_][A-Za-z0-9_]*'
# compile()'s messages about the op of index N start so.
_OP_PREFIX = r'^op \d+: '


class Registration:
    """One m.def found in a shape source."""

    def __init__(self, path, line, op, fn):
        self.path = path
        self.line = line
        self.op = op
        self.fn = fn

    def __repr__(self):
        return f'{self.path}:{self.line}: m.def("{self.op}", ..., "{self.fn}")'


def _without_comments(text):
    """text with each comment blanked (its newlines kept, so that lines
    still count), string literals untouched."""
    def blank(match):
        token = match.group(0)
        if token.startswith('"'):
            return token
        return re.sub(r'[^\n]', ' ', token)
    return re.sub(_TOKENS, blank, text, flags=re.S)


def registrations(paths):
    """The m.def calls with literal names in the files at paths, in order."""
    found = []
    for path in paths:
        try:
            with open(path, encoding='utf-8', errors='replace') as stream:
                text = _without_comments(stream.read())
        except OSError:
            continue   # the shape library's build says why
        for match in re.finditer(_DEFINITION, text):
            found.append(Registration(path, text.count('\n', 0, match.start()) + 1,
                                      match.group(1), match.group(2)))
    return found


class RefusedName(Exception):
    """A name or the op count that compile() would refuse: message is
    build_custom_op's, and registration the m.def it is about (None for
    the count)."""

    def __init__(self, message, registration):
        super().__init__(message)
        self.message = message
        self.registration = registration


def check(paths, target):
    """Checks the names and the count of the m.def calls found in paths as
    compile() will check them for target; raises RefusedName."""
    found = [r for r in registrations(paths) if re.fullmatch(_IDENTIFIER, r.op)]
    if not found:
        return
    schemas = [f'shape_sources::{r.op}(Tensor x) -> Tensor' for r in found]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', build_custom_op.BuildWarning)  # compile() gives them
            build_custom_op.generate_wrapper(schemas, [r.fn for r in found], target=target)
    except build_custom_op.BuildError as error:
        if error.column is not None:
            return   # about the placeholder schema, not the names: step 4 says what is wrong
        if error.schema_index is not None and 0 <= error.schema_index < len(found):
            raise RefusedName(re.sub(_OP_PREFIX, '', error.message),
                             found[error.schema_index]) from None
        raise RefusedName(error.message, None) from None

