"""_arguments - compile()'s and generate_wrapper()'s arguments checked and
turned into a struct bco_request.

Lists may be lists, tuples or other ordered iterables, never sets; includes,
cflags, ldflags and a launcher string are split into words as
build-custom-op splits --launcher (bco_split_words).  A wrong type raises
TypeError naming the argument; a wrong value BuildError.
"""

import ctypes
import os

from build_custom_op import _build_binding
from build_custom_op import BuildError

# Include options whose argument may be the next word; a word after one of
# them is joined to it ("-isystem DIR" -> "-isystemDIR"), since any other
# word in includes is a directory that becomes -IDIR.
_INCLUDE_OPTIONS_WITH_ARGUMENT = ('-I', '-isystem', '-iquote', '-idirafter', '-include',
                                  '-imacros', '-isysroot')


def list_of(value, what):
    """A list argument: a list, a tuple or another ordered iterable; a lone
    string or path is a list of one.  A set is refused: it has no order, and
    the order of each list counts (the ops', the link's, the flags')."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [value]
    if value is None:
        return []
    if isinstance(value, (set, frozenset)):
        raise TypeError(f'{what} must be a list, not a {type(value).__name__}: a set has no '
                        f'order, and the order of {what} counts')
    try:
        return list(value)
    except TypeError:
        raise TypeError(f'{what} must be a list, not {type(value).__name__}') from None


def _encode(value, what):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = os.fsencode(value)
    elif not isinstance(value, bytes):
        raise TypeError(f'{what} must be a str, bytes or path, not {type(value).__name__}')
    if b'\0' in value:
        raise ValueError(f'{what} contains a NUL character: {value!r}')
    return value


def _flag(value, what):
    """A yes-or-no argument: a bool, the int 0 or 1, or None (no)."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return 1 if value else 0
    raise TypeError(f'{what} must be True or False, not {value!r}')


def _shell_words(entry, what):
    """Splits an entry into words as a POSIX shell would, expanding nothing.
    A path object is one word."""
    if isinstance(entry, os.PathLike):
        return [os.fspath(entry)]
    return _build_binding.split_words(_encode(entry, what), what)


def split_flags(flags, what, tool):
    """The words of a list of flags (cflags, ldflags) for tool, which would
    take an empty word for a file."""
    words = []
    for i, entry in enumerate(list_of(flags, what)):
        entry_words = _shell_words(entry, f'{what} entry {i + 1}')
        if '' in entry_words:
            raise BuildError(f'{what} entry {i + 1} {entry!r} holds an empty word: the {tool} '
                             f"would take it for a file named ''", kind='input')
        words.extend(entry_words)
    return words


def split_cflags(cflags):
    return split_flags(cflags, 'cflags', 'compiler')


def sanitizers(sanitize):
    """The sanitizers as the library takes them: 'address,undefined'.  A
    string passes as it is (the library checks the names); a list or tuple
    of names is joined."""
    if sanitize is None or isinstance(sanitize, str):
        return sanitize or None
    names = list_of(sanitize, 'sanitize')
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f'sanitize must hold names such as \'address\', not '
                            f'{type(name).__name__}')
    return ','.join(names) or None


def split_includes(includes):
    words = []
    pending = None  # an option waiting for its argument, maybe in the next entry
    for i, entry in enumerate(list_of(includes, 'includes')):
        for word in _shell_words(entry, f'includes entry {i + 1}'):
            if word == '':
                raise BuildError(f'includes entry {i + 1} {entry!r} holds an empty word: an '
                                 'include directory cannot be empty (-I alone would take the '
                                 "next compiler argument as its directory)", kind='input')
            if pending is not None:
                words.append(pending + word)
                pending = None
            elif word in _INCLUDE_OPTIONS_WITH_ARGUMENT:
                pending = word
            else:
                words.append(word)
    if pending is not None:
        raise BuildError(f'includes: {pending} at the end needs an argument', kind='input')
    return words


def split_launcher(launcher):
    """The launcher's words: a list as given, or a string (default:
    $CUSTOM_OP_LAUNCHER) split as build-custom-op splits --launcher."""
    if launcher is None:
        launcher = os.environ.get('CUSTOM_OP_LAUNCHER', '')
        what = 'CUSTOM_OP_LAUNCHER'
    else:
        what = 'launcher'
    if isinstance(launcher, (str, bytes)):
        return _shell_words(launcher, what)
    return list_of(launcher, 'launcher')


class Strings:
    """Holds the encoded strings and arrays of a request while it is in use."""

    def __init__(self):
        self.keep = []

    def string(self, value, what):
        if value is None:
            return None
        encoded = _encode(value, what)
        self.keep.append(encoded)
        return encoded

    def array(self, values, what, entries_may_be_none=False):
        encoded = []
        for i, value in enumerate(values):
            if value is None and entries_may_be_none:
                encoded.append(None)
            else:
                encoded.append(_encode(value, f'{what} entry {i + 1}'))
        # Never NULL: an empty list given is still a list (a count of 0).
        array = (ctypes.c_char_p * max(1, len(encoded)))(*encoded)
        self.keep.append(array)
        return ctypes.cast(array, _build_binding.StringList), len(encoded)


def _target_code(target):
    if not isinstance(target, str):
        raise TypeError(f"target must be 'xtensa' or 'host', not {type(target).__name__}")
    if target in _build_binding.TARGETS:
        return _build_binding.TARGETS[target]
    raise BuildError(f"unknown target '{target}': use xtensa or host", kind='usage')


def _jobs(jobs):
    if jobs is None:
        return 0
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f'jobs must be an int, not {type(jobs).__name__}')
    if jobs < 0:
        raise BuildError('jobs must be at least 1 (0 means one per CPU)', kind='usage')
    return min(jobs, 2**31 - 1)


def make_request(strings, *, name=None, functions=None, schemas=(), sources=(),
                 build_dir=None, includes=(), cflags=(), launcher=(), target='xtensa',
                 multicore=False, jobs=None, dry_run=False, verbose=False,
                 keep_going=False, sdk=None, core=None, xtensa_system=None, ldflags=(),
                 sanitize=None):
    """A struct bco_request from word lists (nothing is split here)."""
    request = _build_binding.Request()
    request.name = strings.string(name, 'name')
    if functions is not None:
        request.functions, request.function_count = strings.array(
            functions, 'fn_names', entries_may_be_none=True)
    request.schemas, request.schema_count = strings.array(schemas, 'schema')
    request.sources, request.source_count = strings.array(sources, 'src_files')
    request.build_dir = strings.string(build_dir, 'build_directory')
    request.includes, request.include_count = strings.array(includes, 'includes')
    request.cflags, request.cflag_count = strings.array(cflags, 'cflags')
    request.launcher, request.launcher_count = strings.array(launcher, 'launcher')
    request.target = _target_code(target)
    request.multicore = _flag(multicore, 'multicore')
    request.jobs = _jobs(jobs)
    request.dry_run = _flag(dry_run, 'dry_run')
    request.verbose = _flag(verbose, 'verbose')
    request.keep_going = _flag(keep_going, 'keep_going')
    request.sdk = strings.string(sdk, 'sdk')
    request.core = strings.string(core, 'core')
    request.xtensa_system = strings.string(xtensa_system, 'xtensa_system')
    request.ldflags, request.ldflag_count = strings.array(ldflags, 'ldflags')
    request.sanitize = strings.string(sanitize, 'sanitize')
    return request
