"""python3 -m build_custom_op: the build-custom-op program itself.

The program replaces this process (exec), so its options, help, messages,
output and exit status, and a death by a signal, are exactly the program's.
It is found as build_custom_op.program_path() (_cli.py) says."""

import os
import signal
import sys

from build_custom_op._cli import PROGRAM, program_path
from build_custom_op import BuildError


def _say(text):
    if sys.stderr is not None:
        sys.stderr.write(text)


def _exec_program():
    try:
        path = program_path()
    except BuildError as error:
        _say(f'{PROGRAM}: {error}\n')
        return 1
    # Python ignores SIGPIPE and SIGXFSZ for itself; a program started from a
    # shell has the default disposition (as subprocess also restores).
    for name in ('SIGPIPE', 'SIGXFSZ'):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: the descriptor was closed at start
            stream.flush()
    try:
        os.execv(path, [path] + sys.argv[1:])
    except OSError as error:
        _say(f'{PROGRAM}: cannot run {path}: {error.strerror}\n')
    return 1


if __name__ == '__main__':
    sys.exit(_exec_program())
