"""test_shape_library.py - the shape library's build under load(): an
interrupted build stops the compilers it started, so none goes on writing
into the cache directory after its lock is released."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

# A compiler that, asked to compile, writes its pid and waits; anything else
# (the version checks of cpp_extension) goes to the real one.
FAKE_COMPILER = """#!/bin/sh
for argument in "$@"; do
	if [ "$argument" = -c ]; then
		echo $$ >"$FAKE_WORK/compiler.pid"
		exec sleep 120
	fi
done
exec "$REAL_CXX" "$@"
"""

# Interrupts itself (as `kill -INT` of the Python process alone would) once
# the compile has started.
INTERRUPTED_LOAD = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from build_custom_op import _shape_library
pid_file = os.path.join(os.environ['FAKE_WORK'], 'compiler.pid')
def interrupt():
    while not os.path.exists(pid_file) or not open(pid_file).read().strip():
        time.sleep(0.02)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
try:
    _shape_library.build_and_load('interrupted', [sys.argv[1]], [], [], False)
    print('built')
except KeyboardInterrupt:
    print('interrupted')
"""


def running(pid):
    """Whether process pid exists and is not a zombie."""
    try:
        with open(f'/proc/{pid}/stat') as stream:
            return stream.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


class InterruptedBuildTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='bco-shape-test.')
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)

    def test_an_interrupted_build_stops_its_compiler(self):
        real = shutil.which('c++')
        if real is None:
            self.skipTest('no C++ compiler: apt-get install g++')
        tools = os.path.join(self.work, 'bin')
        os.mkdir(tools)
        with open(os.path.join(tools, 'c++'), 'w') as stream:
            stream.write(FAKE_COMPILER)
        os.chmod(os.path.join(tools, 'c++'), 0o755)
        environment = dict(os.environ, FAKE_WORK=self.work, REAL_CXX=real,
                           PATH=tools + os.pathsep + os.environ.get('PATH', ''),
                           BUILD_CUSTOM_OP_CACHE=os.path.join(self.work, 'cache'),
                           PYTHONPATH=os.path.join(fixture.TOP, 'python'))
        environment.pop('CXX', None)
        done = subprocess.run([sys.executable, '-c', INTERRUPTED_LOAD, fixture.OTHER_SHAPES[0]],
                              env=environment, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.stdout, 'interrupted\n', done.stderr)
        with open(os.path.join(self.work, 'compiler.pid')) as stream:
            pid = int(stream.read())
        self.addCleanup(lambda: running(pid) and os.kill(pid, signal.SIGKILL))
        # ninja waits for what it stopped before it exits; allow for a slow machine.
        for _ in range(100):
            if not running(pid):
                break
            time.sleep(0.05)
        self.assertFalse(running(pid), 'the compiler outlived the interrupted load()')


if __name__ == '__main__':
    tap.main(needs_torch=True)
