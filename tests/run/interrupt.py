#!/usr/bin/env python3
"""interrupt.py - runs a program, presses Ctrl-C on it, and says how it ended.

usage: interrupt.py SECONDS PROGRAM [ARGUMENT]...

Starts PROGRAM with SIGINT at its default action (a shell leaves it ignored
in a program started in the background), sends it SIGINT after SECONDS, and
prints "signal N" or "exit N", then what the program wrote to standard
error.  A program still running 10 s after the signal is killed, and
"still running" is printed instead.
"""
import signal
import subprocess
import sys
import time


def main():
    seconds, argv = float(sys.argv[1]), sys.argv[2:]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(seconds)
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        print("still running")
    else:
        code = process.returncode
        print("signal %d" % -code if code < 0 else "exit %d" % code)
    sys.stdout.write(err.decode(errors="replace"))


main()
