"""_signals - SIGINT and SIGTERM around a call of libbuildcustomop.

During the call Python's handlers are held back and the signals they would
have taken are raised again after it (DeferredSignals); after a build the
library stopped for a signal, the caller's own disposition of that signal
acts (deliver_interrupt).  Python's handlers only change and only run in
the main thread: a call from another thread holds nothing back, and the
signal is raised again for the main thread.
"""

import signal
import threading


class DeferredSignals:
    """Holds back Python's handlers of SIGINT and SIGTERM during a call.

    A Python signal handler runs at the next Python code, which during a
    call may be the progress callback; an exception raised there (a
    KeyboardInterrupt) would be printed and dropped by ctypes.  So while the
    library runs (outside its steps, where its own handlers take over), a
    Python handler is replaced by one that notes the signal, and after the
    call the noted signals are raised again for the original handlers."""

    def __init__(self):
        self.saved = {}
        self.noted = []

    def __enter__(self):
        # Python handlers can only be changed, and only run, in the main thread.
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                handler = signal.getsignal(number)
                if callable(handler):
                    self.saved[number] = handler
                    signal.signal(number, self.note)
        return self

    def note(self, number, frame):
        if number not in self.noted:
            self.noted.append(number)

    def __exit__(self, *exception):
        for number, handler in self.saved.items():
            signal.signal(number, handler)

    def deliver(self):
        """Raises the noted signals again; their handlers run now."""
        for number in self.noted:
            signal.raise_signal(number)


def deliver_interrupt(error):
    """After the library stopped a build for a signal (its handler had taken
    the signal's place while the steps ran): act as the caller's own
    disposition of that signal would have; else raise error (a BuildError
    of kind 'interrupted')."""
    number = error.signal or signal.SIGINT
    handler = signal.getsignal(number)
    if threading.current_thread() is not threading.main_thread():
        # Python runs signal handlers in the main thread only: the signal,
        # raised again, reaches the main thread as it would have without the
        # build (a KeyboardInterrupt there for Ctrl-C), and this thread's
        # call ends with the error.
        if handler == signal.SIG_DFL or callable(handler):
            signal.raise_signal(number)
        raise error
    if number == signal.SIGINT and handler is signal.default_int_handler:
        raise KeyboardInterrupt
    if handler == signal.SIG_DFL or callable(handler):
        # SIG_DFL ends the process as the signal would have; a Python
        # handler runs now, and what it raises propagates.
        signal.raise_signal(number)
    raise error
