"""_library.py - finding the project's shared libraries and programs.

A library (libbuildcustomop.so, libruncustomop.so) or a program
(build-custom-op) is looked up, in this order: the source tree (the
repository root, after ``make``, when this package is python/build_custom_op
of that tree), the installation (see below), then the path in an
environment variable of the caller's choice.  An installed copy of the
package never looks at a source tree: it has none beside it.

An installed copy holds _installation.py, which the install wrote (make
install, and so make deb and the wheel of pip install, which stage make
install): the directories of the programs, libraries, headers, data and
the host SDK, each relative to the package's own directory.  So an
installation can be moved whole, and a wheel, whose prefix is only known
when pip unpacks it, finds its parts as make install's tree does.
"""

import ctypes
import os
import threading

try:
    from build_custom_op import _installation
except ImportError:   # the source tree's copy
    _installation = None

# The directory of this package, as Python found it (a symbolic link on the
# way is kept: the install's directories are relative to where it put it).
_PACKAGE = os.path.dirname(os.path.abspath(__file__))

# The directory that holds python/ in the source tree: three levels above
# this file (python/build_custom_op/_library.py).
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


# libruncustomop and libbuildcustomop: each one's file, and the variable
# that may name another copy.
RUNNER_FILE = 'libruncustomop.so'
RUNNER_VARIABLE = 'RUN_CUSTOM_OP_LIBRARY'
BUILDER_FILE = 'libbuildcustomop.so'
BUILDER_VARIABLE = 'BUILD_CUSTOM_OP_LIBRARY'


class LibraryNotFound(Exception):
    """No candidate could be loaded; the message says where each was sought."""


class ProgramNotFound(Exception):
    """No candidate program exists; the message says where each was sought."""


def installed():
    """True in a copy of the package that an install wrote."""
    return _installation is not None


def installed_directory(name):
    """The directory the install put NAME in ('BINDIR', 'LIBDIR',
    'INCLUDEDIR', 'DATADIR', 'PKGLIBDIR': where the host SDK and the torch
    kit are), or None in the source tree's copy."""
    if _installation is None:
        return None
    return os.path.normpath(os.path.join(_PACKAGE, getattr(_installation, name)))


def source_tree():
    """The source tree this copy of the package belongs to, or None for an
    installed copy."""
    return None if installed() else _TOP


def _candidates(filename, installed_name, installed_directory, variable):
    if not installed():
        yield os.path.join(_TOP, filename)
    if installed_directory is not None:
        yield os.path.join(installed_directory, installed_name)
    path = os.environ.get(variable)
    if path:
        yield path


def candidates(filename, variable):
    """The paths tried for the library filename, in order."""
    return _candidates(filename, filename + '.0', installed_directory('LIBDIR'), variable)


def _not_found(what, filename, variable, problems):
    if not os.environ.get(variable):
        problems.append(f'{variable} is not set')
    return (f'cannot {what} {filename} (' + '; '.join(problems) + '). '
            "Run 'make' in the build-custom-op source tree, or set "
            f'{variable} to the path of {filename}.')


def load(filename, variable, declare):
    """Loads the first candidate that exists and that declare(library)
    accepts (it sets the functions' argument and result types).  Raises
    LibraryNotFound with every problem met."""
    problems = []
    for path in candidates(filename, variable):
        if not os.path.exists(path):
            problems.append(f'{path}: not found')
            continue
        try:
            library = ctypes.CDLL(path)
            declare(library)
        except (OSError, AttributeError) as error:
            problems.append(f'{path}: {error}')
            continue
        return library
    raise LibraryNotFound(_not_found('load', filename, variable, problems))


_shared = {}
_shared_lock = threading.Lock()


def _after_fork():
    """In the child of fork(): a lock another thread of the parent held is
    held for ever here; the child gets a new one."""
    global _shared_lock
    _shared_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def shared(filename, variable, accept):
    """The process's one load of the library filename: load()ed with
    accept the first time, then the same library, which accept(library)
    must accept again (each caller declares, or checks, the functions it
    uses).  Raises LibraryNotFound."""
    with _shared_lock:
        library = _shared.get(filename)
        if library is None:
            library = _shared[filename] = load(filename, variable, accept)
            return library
        try:
            accept(library)
        except AttributeError as error:
            raise LibraryNotFound(f'{library._name}: {error}') from None
        return library


def find_program(filename, variable):
    """The path of the first candidate that is an executable file.  Raises
    ProgramNotFound with every problem met."""
    problems = []
    for path in _candidates(filename, filename, installed_directory('BINDIR'), variable):
        if not os.path.isfile(path):
            problems.append(f'{path}: not found')
        elif not os.access(path, os.X_OK):
            problems.append(f'{path}: not executable')
        else:
            return path
    raise ProgramNotFound(_not_found('find', filename, variable, problems))
