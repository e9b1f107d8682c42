"""_errors - the exceptions and warnings of compile() and generate_wrapper().

Both are the package's own names (build_custom_op.BuildError,
build_custom_op.BuildWarning), and so they are named in messages and
tracebacks.
"""


class BuildError(Exception):
    """A build that did not succeed, with the library's full message.

    kind is one of 'input' (a bad schema, name, file or value), 'usage' (a
    malformed request), 'tool' (a tool or SDK file is missing), 'step' (a
    compile, link or pack step failed: the message holds the command and its
    output), 'interrupted' and 'system'.  schema_index (0-based) and column
    (1-based) point into the schema a schema error is about, else None.
    signal is the signal that interrupted the build, else None.
    """

    __module__ = 'build_custom_op'

    def __init__(self, message, kind='input', schema_index=None, column=None, signal=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.schema_index = schema_index
        self.column = column
        self.signal = signal


class BuildWarning(UserWarning):
    """A warning about the input of a build (compile() issues it)."""

    __module__ = 'build_custom_op'
