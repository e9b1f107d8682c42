"""_cli - the build-custom-op program from Python: where it is
(program_path()) and main(), which runs it as a child process.  python3 -m
build_custom_op (__main__.py) replaces the process with it instead."""

import os
import signal
import subprocess
import sys

from build_custom_op import _library
from build_custom_op import BuildError

PROGRAM = 'build-custom-op'
PROGRAM_VARIABLE = 'BUILD_CUSTOM_OP_PROGRAM'


def program_path():
    """The path of the build-custom-op program that python3 -m
    build_custom_op and main() run: the source tree's (after make), the
    install's (make install records it), or $BUILD_CUSTOM_OP_PROGRAM.
    Raises BuildError (kind 'tool') when there is none."""
    try:
        return _library.find_program(PROGRAM, PROGRAM_VARIABLE)
    except _library.ProgramNotFound as error:
        raise BuildError(str(error), kind='tool') from None


def main(argv=None):
    """Runs the build-custom-op program with argv (default: sys.argv[1:]),
    on this process's standard descriptors, and returns its exit status; a
    program ended by signal N gives 128 + N, as a shell reports it.  A
    KeyboardInterrupt while it runs is passed on to it as SIGINT: main()
    waits for it to stop its tools and delete their partial outputs, then
    raises the KeyboardInterrupt.  A missing program raises BuildError."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    process = subprocess.Popen([program_path()] + [os.fspath(word) for word in arguments])
    interrupted = None
    while True:
        try:
            status = process.wait()
            break
        except KeyboardInterrupt as interrupt:
            interrupted = interrupt
            process.send_signal(signal.SIGINT)
    if interrupted is not None:
        raise interrupted
    return 128 - status if status < 0 else status
