"""_library.py - finding and loading the project's shared libraries.

A library (libbuildcustomop.so, libruncustomop.so) is looked up, in this
order: the source tree (the repository root, after ``make``, when this
package is python/build_custom_op of that tree), the install prefix
(``make install`` records its library directory here), then the path in
an environment variable of the caller's choice.
"""

import ctypes
import os

# `make install` replaces this with the library directory of the install.
_INSTALLED_LIBDIR = '@LIBDIR@'

# The directory that holds python/ in the source tree: three levels above
# this file (python/build_custom_op/_library.py).
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


class LibraryNotFound(Exception):
    """No candidate could be loaded; the message says where each was sought."""


def candidates(filename, variable):
    """The paths tried for filename, in order."""
    yield os.path.join(_TOP, filename)
    if not _INSTALLED_LIBDIR.startswith('@'):
        yield os.path.join(_INSTALLED_LIBDIR, filename + '.0')
    path = os.environ.get(variable)
    if path:
        yield path


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
    if not os.environ.get(variable):
        problems.append(f'{variable} is not set')
    raise LibraryNotFound(
        f'cannot load {filename} (' + '; '.join(problems) + '). '
        "Run 'make' in the build-custom-op source tree, or set "
        f'{variable} to the path of {filename}.')
