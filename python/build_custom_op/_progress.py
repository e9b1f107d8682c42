"""_progress - what compile() and generate_wrapper() do with the progress
lines libbuildcustomop gives during a call (struct bco_request's progress
callback): status and commands on stderr when verbose, the commands on
stdout for a dry run, a step's output on stderr; warnings and failures kept
for the caller."""

import sys

from build_custom_op import _build_binding
from build_custom_op._build_binding import (MESSAGE_STATUS, MESSAGE_COMMAND, MESSAGE_OUTPUT,
                                            MESSAGE_WARNING, MESSAGE_FAILURE)


def _with_newline(text):
    return text if text.endswith('\n') or not text else text + '\n'


class Sink:
    """Receives the library's progress lines during one call.  An exception
    raised here (a closed stream, a KeyboardInterrupt between two steps) is
    kept and raised again when the library returns, instead of being lost
    inside the C callback."""

    def __init__(self):
        self.failures = []
        self.warnings = []
        self.exception = None

    def __call__(self, context, kind, raw):
        try:
            self.receive(kind, _build_binding.text(raw))
        except BaseException as exception:  # re-raised after the call
            if self.exception is None:
                self.exception = exception

    def receive(self, kind, text):
        if kind == MESSAGE_FAILURE:
            self.failures.append(text)
        elif kind == MESSAGE_WARNING:
            self.warnings.append(text)


class QuietSink(Sink):
    """compile(): quiet unless verbose; failures go into BuildError."""

    def __init__(self, verbose, dry_run):
        super().__init__()
        self.verbose = verbose
        self.dry_run = dry_run

    def receive(self, kind, text):
        super().receive(kind, text)
        # A stream that is None (closed when Python started) drops the
        # text, as print() does.
        if kind == MESSAGE_COMMAND and self.dry_run:
            if sys.stdout is not None:
                sys.stdout.write(text + '\n')
        elif kind == MESSAGE_OUTPUT or (self.verbose and kind in (MESSAGE_STATUS,
                                                                   MESSAGE_COMMAND)):
            if sys.stderr is not None:
                sys.stderr.write(_with_newline(text))
                sys.stderr.flush()
