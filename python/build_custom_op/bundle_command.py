"""build-custom-op bundle: the shape-library flow from the command line.

``build-custom-op bundle`` runs this file as a script, under an interpreter
that can import PyTorch, started isolated (``python3 -I``: nothing of the
current directory or PYTHONPATH is imported); the script puts the package
it belongs to on the path itself.  It runs the steps of custom_op.load()
and writes lib<NAME>.so, without registering anything.  See USAGE.
"""

import contextlib
import getopt
import os
import signal
import sys

PROGRAM = 'build-custom-op'
COMMAND = 'build-custom-op bundle'
TORCH_INSTALL = 'apt-get install python3-torch pybind11-dev ninja-build'
# Debian's torch belongs to /usr/bin/python3, which need not be the python3
# first on PATH.
TORCH_INTERPRETERS = ('/usr/bin/python3', 'python3')
_REEXECUTED = 'BUILD_CUSTOM_OP_BUNDLE_REEXECUTED'

if __name__ == '__main__':
    # The package this file belongs to, which -I leaves off the path.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

USAGE = """\
Usage: build-custom-op bundle [OPTIONS] --name NAME --shape FILE... SOURCE...

Builds lib<NAME>.so, the bundle that custom_op.load_library() loads: the
shape library built from the --shape sources (which register their ops with
NEURON_LIBRARY from torchneuron/register.h), the compute library built from
the SOURCE files, and metadata.json.  These are the steps of
build_custom_op.custom_op.load(), run in Python with PyTorch (python3-torch);
nothing is registered.  Prints the bundle's path.

Options:
      --name NAME        the library's name: writes lib<NAME>.so
      --shape FILE       a shape source (at least one; may be repeated)
  -B, --build-dir DIR    where lib<NAME>.so is written (default: build)
  -I DIR                 an include directory of the shape sources
                         (extra_include_paths; the compute build does not see it)
  -D NAME[=VALUE]        define a macro in both builds (extra_cflags)
      --cflag FLAG       pass FLAG to both builds (extra_cflags; -std=... to the
                         compute build only)
      --multicore        eight compute libraries, one per GPSIMD core
      --target T         xtensa (the device) or host (this machine's emulated
                         cores); default: $CUSTOM_OP_TARGET, else xtensa
  -v, --verbose          print each step and command
  -h, --help             show this help

The shape library is kept in a cache ($BUILD_CUSTOM_OP_CACHE, else
$XDG_CACHE_HOME/build-custom-op or ~/.cache/build-custom-op) and built again
only when its sources or flags change.

Exit status: 0 built, 1 a step failed (the message names the step and the
file), 2 usage error, 130 interrupted.
"""

_LONG_OPTIONS = ['name=', 'shape=', 'build-dir=', 'cflag=', 'multicore', 'target=', 'verbose',
                 'help']


class _UsageError(Exception):
    pass


def _usage_message(error):
    """The wording build-custom-op uses for a getopt error."""
    option = ('-' if len(error.opt) == 1 else '--') + error.opt
    if 'not recognized' in error.msg:
        return f"unrecognized option '{option}'"
    if 'requires argument' in error.msg:
        return f"option '{option}' needs an argument"
    if 'must not have an argument' in error.msg:
        return f"option '{option}' doesn't allow an argument"
    if 'not a unique prefix' in error.msg:
        return f"option '{option}' is ambiguous"
    return error.msg


def _parse(argv):
    try:
        options, sources = getopt.gnu_getopt(argv, 'B:I:D:vh', _LONG_OPTIONS)
    except getopt.GetoptError as error:
        raise _UsageError(_usage_message(error)) from None
    settings = dict(name=None, shapes=[], build_directory='build', includes=[], cflags=[],
                    multicore=False, target=None, verbose=False, help=False, sources=sources)
    for option, value in options:
        if option == '--name':
            settings['name'] = value
        elif option == '--shape':
            settings['shapes'].append(value)
        elif option in ('-B', '--build-dir'):
            settings['build_directory'] = value
        elif option == '-I':
            settings['includes'].append(value)
        elif option == '-D':
            settings['cflags'].append('-D' + value)
        elif option == '--cflag':
            settings['cflags'].append(value)
        elif option == '--multicore':
            settings['multicore'] = True
        elif option == '--target':
            if value not in ('xtensa', 'host'):
                raise _UsageError(f"unknown target '{value}': use xtensa or host")
            settings['target'] = value
        elif option in ('-v', '--verbose'):
            settings['verbose'] = True
        elif option in ('-h', '--help'):
            settings['help'] = True
    if settings['help']:
        return settings
    if settings['name'] is None:
        raise _UsageError('no library name: give --name NAME')
    if not settings['shapes']:
        raise _UsageError('no shape source: give --shape FILE, the C++ file that registers '
                          'the ops with NEURON_LIBRARY')
    if not sources:
        raise _UsageError("no SOURCE: give the kernels' C++ files")
    return settings


def _with_torch(argv):
    """Returns when torch is importable here; else runs this command under
    an interpreter that can import it (never returns), or reports that
    PyTorch is missing and returns False."""
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        pass
    if not os.environ.get(_REEXECUTED):
        import shutil
        import subprocess
        here = os.path.realpath(sys.executable)
        for candidate in TORCH_INTERPRETERS:
            path = shutil.which(candidate)
            if path is None or os.path.realpath(path) == here:
                continue
            probe = subprocess.run([path, '-I', '-c', 'import torch'],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   cwd='/')
            if probe.returncode == 0:
                environment = dict(os.environ)
                environment[_REEXECUTED] = '1'
                sys.stdout.flush()
                sys.stderr.flush()
                os.execve(path, [path, '-I', os.path.realpath(__file__)] + argv, environment)
    sys.stderr.write(f'{PROGRAM}: bundle needs PyTorch, which no interpreter here can import '
                     f'({sys.executable} cannot): {TORCH_INSTALL}\n')
    return False


@contextlib.contextmanager
def _stdout_to_stderr():
    """Progress goes to stderr, the tools' included (they write to file
    descriptor 1): stdout carries only the bundle's path."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _print(text):
    """Writes text to stdout; returns the exit status: 1, with a message,
    when it cannot be written (a full disk), as the program does."""
    if sys.stdout is None:  # closed at start: as the program, which puts /dev/null there
        return 0
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as error:
        sys.stderr.write(f'{PROGRAM}: cannot write to stdout: {error.strerror}\n')
        # What could not be written is dropped, so the exit does not try again.
        sys.stdout = None
        return 1
    return 0


def main(argv=None):
    """The command; returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    try:
        settings = _parse(argv)
    except _UsageError as error:
        sys.stderr.write(f"{PROGRAM}: {error}\nTry '{COMMAND} --help' for more information.\n")
        return 2
    if settings['help']:
        return _print(USAGE)
    if not _with_torch(argv):
        return 1
    from build_custom_op import BuildError
    from build_custom_op import custom_op
    try:
        with _stdout_to_stderr():
            path = custom_op._run_load(
                settings['name'], settings['sources'], settings['shapes'], settings['cflags'],
                settings['includes'], settings['build_directory'], settings['multicore'],
                settings['verbose'], settings['target'], register=False, caller='bundle')
    except BuildError as error:
        sys.stderr.write(f'{PROGRAM}: {error.message}\n')
        if error.kind == 'usage':
            sys.stderr.write(f"Try '{COMMAND} --help' for more information.\n")
            return 2
        if error.kind == 'interrupted':
            return 128 + (error.signal or signal.SIGINT)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f'{PROGRAM}: interrupted by SIGINT\n')
        return 128 + signal.SIGINT
    return _print(path + '\n')


if __name__ == '__main__':
    sys.exit(main())
