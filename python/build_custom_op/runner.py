"""runner - run host-built custom ops from Python, on torch tensors.

A build made by ``build-custom-op --target host`` (``compile(...,
target='host')``) is opened once and its ops run on tensors in place, on
eight emulated GPSIMD cores (or one), through libruncustomop, the library
behind ``run-custom-op``::

    from build_custom_op import runner
    with runner.open('build/relu') as library:
        y = library.run('relu', x)          # x: a torch.float32 tensor

A kernel's violation of a device rule, a fault, ``abort()``, an uncaught
C++ exception or a call of ``exit()`` raises ``RunError`` naming the core
and the op; the library stays usable (see ``Library.run`` for the time
limit).  ``torch`` is imported when the first op runs, not before.

The shared library is looked up as libbuildcustomop is: the source tree
(after ``make``), the install prefix (``make install``), then the path in
the environment variable RUN_CUSTOM_OP_LIBRARY.
"""

import collections
import ctypes
import numbers
import os
import struct
import sys
import threading
import warnings
import weakref

from build_custom_op import _profile
# LIBRARY_FILE, LIBRARY_VARIABLE and RunError are runner's names too.
from build_custom_op._run_binding import (  # noqa: F401
    LIBRARY_FILE, LIBRARY_VARIABLE, RunError, _DEFAULT_TIMEOUT,
    _TENSOR, _INTEGER, _REAL, _LARGE_INTEGER, _TIMEOUT, _INTERRUPTED, _STATUS_NAMES,
    _OUTPUT_CHECKS, _output_checks_from_environment, _load, _dtypes, _run_error, _error_of)
from build_custom_op._run_types import (
    _MAX_RANK, _MAX_ARGUMENTS, _Tensor, _Argument, _Error, _PRINT_FUNCTION, _WARN_FUNCTION,
    _Options, _TensorDescription)

__all__ = ['open', 'Library', 'Op', 'RunError', 'RunWarning', 'library_path']

_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


class RunWarning(UserWarning):
    """A warning of the emulated runtime: "core N: op NAME: ..." (or "cores
    0-7: op NAME: ..." for a warning several cores gave); the op went on."""


Op = collections.namedtuple('Op', 'name kinds signature')
Op.__doc__ = """An op of a build: its name, its argument kinds (one letter per
argument: T Tensor, S Scalar, i int, f float, l long long) and its argument
list as the schema writes it, e.g. Op('axpby', 'TTSfi',
'(Tensor x, Tensor y, Scalar a, float b, int n)')."""


# A tensor's fields as struct packs them, to fill a _Tensor in one call.
_TENSOR_LAYOUT = struct.Struct('@ii%dq%dqP' % (_MAX_RANK, _MAX_RANK))
assert _TENSOR_LAYOUT.size == ctypes.sizeof(_Tensor)
_ZEROS = (0,) * _MAX_RANK


def library_path():
    """The path of the libruncustomop.so in use."""
    return _load()._name


# ---- torch, imported when the first op runs ----

_torch = None
_dtype_numbers = None
_device_dtypes = None  # 'float32, bfloat16, ...', for messages


def _torch_module():
    global _torch, _dtype_numbers, _device_dtypes
    if _torch is None:
        import torch
        dtypes = _dtypes()
        _dtype_numbers = {getattr(torch, name): number for name, number, _ in dtypes}
        _device_dtypes = ', '.join(name for name, _, _ in dtypes)
        _torch = torch
    return _torch


# ---- what run-custom-op shows, for the default callbacks ----

_flagged_note_shown = False


def _print_as_the_runner_does(core, text):
    """Core 0's output to sys.stdout as printed; cores 1-7 to sys.stderr,
    a line at a time, marked [core N], after a note that the device would
    not show them.  A stream that is None (closed when Python started)
    drops the text, as print() does."""
    global _flagged_note_shown
    if core == 0:
        if sys.stdout is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    if sys.stderr is None:
        return
    if not _flagged_note_shown:
        sys.stderr.write('note: lines marked [core N] were printed by cores 1-7; on the device '
                         "only core 0's output reaches the host\n")
        _flagged_note_shown = True
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    for line in lines:
        sys.stderr.write(f'[core {core}] {line}\n')


def _warn_as_python_does(text):
    warnings.warn(text, RunWarning, stacklevel=3)


# The tensors of calls that passed their time limit: a core that could not
# be stopped may still read and write them, so they are never freed, not
# even when the interpreter ends (the list itself is never released).
_abandoned = []
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_abandoned))

# Every open Library, for the child of a fork (see _after_fork).
_libraries = weakref.WeakSet()


def _after_fork():
    """In the child of fork(): the locks another thread of the parent held
    are held for ever here; each Library gets a new one.  (The library
    starts cores of the child's own at its next call.)"""
    for library in list(_libraries):
        library._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _mark_written(tensor):
    """Bumps the version counter of tensor (and of its views), as an in-place
    op does, so that autograd refuses a graph that saved it; raises, as
    PyTorch's in-place ops do, for a leaf that requires grad or an
    inference tensor outside inference mode."""
    tensor.as_strided((0,), (1,)).zero_()


def open(path, *, cores=None, core_stack=None, timeout=None, on_print=None, on_warning=None,
         output_checks=None):
    """Opens the host build at path (BUILD_DIR/NAME, as run-custom-op takes
    it; a str or path-like) and returns a Library.

    cores: 1 or 8 (None: as the build is, 8 when NAME_cpu0.so exists);
    core_stack: the bytes of each emulated core stack (None: 12 KiB);
    timeout: seconds each run may take (None: no limit; see Library.run);
    on_print(core, text): receives each core's printf output after each
    run (default: core 0's on sys.stdout, the others' on sys.stderr marked
    [core N], as run-custom-op shows them); on_warning(text): receives each
    warning of the runtime (default: a Python warning of category
    RunWarning); output_checks: 'error', 'warn' or 'off', what output
    elements no core wrote, two cores wrote, or one core read while another
    writes them are (None: $BUILD_CUSTOM_OP_OUTPUT_CHECKS, else 'error'; see
    run-custom-op(1)).  Raises RunError when the build cannot be opened."""
    return Library(path, cores, core_stack, timeout, on_print, on_warning, output_checks)


class Library:
    """An open host build; see open().  Calls on one Library from several
    threads take turns; different Libraries run at the same time."""

    def __init__(self, path, cores, core_stack, timeout, on_print, on_warning, output_checks=None):
        self._handle = None
        self._shared = _load()
        self.path = os.fspath(path)
        self._on_print = on_print if on_print is not None else _print_as_the_runner_does
        self._on_warning = on_warning if on_warning is not None else _warn_as_python_does
        self._lock = threading.Lock()
        self._printed = []
        self._warned = []
        # Kept for as long as the library may call them.
        self._print_callback = _PRINT_FUNCTION(self._keep_print)
        self._warn_callback = _WARN_FUNCTION(self._keep_warning)
        options = _Options()
        if cores is not None:
            if cores not in (1, 8) or isinstance(cores, bool):
                raise RunError(f'cores={cores!r}: expected 1 or 8 (or None: as the build is)',
                               kind='usage')
            options.cores = cores
        if core_stack is not None:
            if not isinstance(core_stack, numbers.Integral) or isinstance(core_stack, bool) \
                    or core_stack <= 0:
                raise RunError(f'core_stack={core_stack!r}: expected a number of bytes',
                               kind='usage')
            options.core_stack = core_stack
        options.timeout = self._seconds(timeout, 'timeout', 0.0)
        options.stop_on_interrupt = 1
        if output_checks is not None:
            if output_checks not in _OUTPUT_CHECKS:
                raise RunError(f"output_checks={output_checks!r}: expected 'error', 'warn' or "
                               "'off' (or None)", kind='usage')
            options.output_checks = _OUTPUT_CHECKS[output_checks]
        options.print = self._print_callback
        options.warn = self._warn_callback
        error = _Error()
        handle = ctypes.c_void_p()
        encoded = os.fsencode(self.path)
        if self._shared.rco_open(encoded, ctypes.byref(options), ctypes.byref(handle),
                                 ctypes.byref(error)) != 0:
            raise _error_of(error)
        self._handle = handle
        shared, raw = self._shared, handle
        self.ops = tuple(Op(shared.rco_op_name(raw, i).decode(),
                            shared.rco_op_kinds(raw, i).decode(),
                            shared.rco_op_signature(raw, i).decode())
                         for i in range(shared.rco_op_count(raw)))
        self.cores = shared.rco_core_count(raw)
        self._index = {op.name: i for i, op in enumerate(self.ops)}
        # One call's structures, reused by every call.
        self._arguments = (_Argument * _MAX_ARGUMENTS)()
        # Where each argument's tensor and the output lie, to pack them in place.
        self._argument_tensors = [(memoryview(self._arguments).cast('B'),
                                   i * ctypes.sizeof(_Argument) + _Argument.tensor.offset)
                                  for i in range(_MAX_ARGUMENTS)]
        self._output = _Tensor()
        self._error = _Error()
        self._run = shared.rco_run
        self._arguments_pointer = ctypes.cast(self._arguments, ctypes.POINTER(_Argument))
        self._output_pointer = ctypes.pointer(self._output)
        self._output_slot = (memoryview(self._output).cast('B'), 0)
        self._error_pointer = ctypes.pointer(self._error)
        _libraries.add(self)

    @staticmethod
    def _seconds(value, name, default):
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
            raise RunError(f'{name}={value!r}: expected a number of seconds above 0 '
                           '(or None: no limit)', kind='usage')
        return float(value)

    def _keep_print(self, context, core, text, length):
        self._printed.append((core, ctypes.string_at(text, length)))

    def _keep_warning(self, context, core, text):
        self._warned.append(text)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()
        return False

    def __del__(self):
        if getattr(self, '_handle', None) is not None and not sys.is_finalizing():
            self.close()

    def __repr__(self):
        state = 'closed' if self._handle is None else f'{self.cores} cores'
        return f'<build_custom_op.runner.Library {self.path!r}, {state}>'

    def close(self):
        """Stops the core threads and unloads the build (see rco_close)."""
        with self._lock:
            if self._handle is not None:
                self._shared.rco_close(self._handle)
                self._handle = None

    def op(self, name):
        """The Op named name; RunError when the build has none."""
        index = self._index.get(name)
        if index is None:
            names = ', '.join(op.name for op in self.ops)
            raise RunError(f'{self.path} has no op {name} (its ops: {names})', op=name,
                           kind='usage')
        return self.ops[index]

    def _describe(self, op, index):
        """"relu argument 1 (Tensor x)", or for index None "relu's output",
        as the library's messages name them (rco_describe_argument)."""
        text = ctypes.create_string_buffer(1024)
        self._shared.rco_describe_argument(self._handle, self._index[op.name], None,
                                           -1 if index is None else index, text, len(text))
        # An argument past the op's schema has no description of its own.
        return text.value.decode(errors='replace') or f'{op.name} argument {index + 1}'

    def _tensor_of(self, value, place, op, slot):
        """Fills slot (a buffer and the offset of a _Tensor in it) with value
        (a torch tensor) as the cores take it; returns the tensor whose
        memory is used (value itself, or a contiguous copy).  place is the
        argument's index, or None for the output."""
        number = _dtype_numbers.get(value.dtype)
        if number is None or not value.is_cpu or value.dim() > _MAX_RANK or \
                value.layout != _torch.strided:
            self._refuse_tensor(value, place, op)
        if value.is_neg():
            value = value.resolve_neg()
        if value._is_zerotensor():
            value = _torch.zeros(value.shape, dtype=value.dtype)  # it holds no memory
        if not value.is_contiguous():
            value = value.contiguous()
        shape = value.shape
        rank = len(shape)
        strides = [1] * rank
        for d in range(rank - 1, 0, -1):
            strides[d - 1] = strides[d] * shape[d]
        padding = _ZEROS[rank:]
        buffer, offset = slot
        _TENSOR_LAYOUT.pack_into(buffer, offset, number, rank, *shape, *padding, *strides, *padding,
                                 value.data_ptr())
        return value

    def _refuse_tensor(self, value, place, op):
        """Raises the library's refusal of value (rco_accept_tensor), for a
        tensor that is not a strided CPU tensor of a device dtype and at
        most 8 dimensions: the tensors _tensor_of takes in place or copies
        are those the library accepts."""
        description = _TensorDescription(
            on_host=value.device.type == 'cpu', device=str(value.device).encode(),
            strided=value.layout == _torch.strided, layout=str(value.layout).encode(),
            dtype=_dtype_numbers.get(value.dtype, -1),
            dtype_name=str(value.dtype).replace('torch.', '').encode(), rank=value.dim())
        if self._shared.rco_accept_tensor(self._handle, self._index[op.name], None,
                                          -1 if place is None else place,
                                          ctypes.byref(description), None,
                                          self._error_pointer) != 0:
            raise _error_of(self._error)

    def run(self, op, *args, out=None, shape=None, dtype=None, timeout=None, profile=False):
        """Runs op (a name or an Op) on every core at once and returns the output.

        args: a torch tensor for each Tensor argument, a Python number for
        each other (converted by the schema's kind as run-custom-op
        --scalar converts it).  Contiguous tensors of a device dtype are used
        in place; others are copied to a contiguous tensor first; a dtype is
        never converted.  out: a torch tensor the cores write into, returned;
        else one is made from shape and dtype, else from the first tensor
        argument, and filled with NaN (floats) or bytes 0xA5 (integers)
        first, so that elements the kernel does not write stand out.  out
        counts as written by an in-place op (its version counter goes up,
        before the kernel runs); it may be an input itself, but not share
        only part of an input's memory, nor have elements that share memory.

        timeout: seconds this call may take (None: the library's).  When it
        passes, RunError of kind 'timeout' names the cores still running;
        they are stopped, and the next call runs on new cores, loaded from
        the build's files again (the kernels' static state starts afresh).
        The call's tensors are then kept until the process ends: a core
        that did not stop may still use them.  Ctrl-C
        (SIGINT) stops a call as a time limit does, and the process's SIGINT
        handler then runs: Python's raises KeyboardInterrupt as the call
        returns.  The kernel's printf output and the runtime's warnings
        reach on_print and on_warning before run returns, also when it
        raises.  profile=True returns (output, profile), the call's
        build_custom_op.Profile (see run-custom-op(1), THE PROFILE)."""
        if isinstance(op, Op):
            op = op.name
        index = self._index.get(op) if isinstance(op, str) else None
        if index is None:
            self.op(op if isinstance(op, str) else repr(op))
        record = self.ops[index]
        seconds = _DEFAULT_TIMEOUT if timeout is None else self._seconds(timeout, 'timeout', 0.0)
        torch = _torch if _torch is not None else _torch_module()
        with self._lock:
            if self._handle is None:
                raise RunError(f'{self.path} is closed', op=record.name, kind='usage')
            count = len(args)
            if count > _MAX_ARGUMENTS:
                raise RunError(f'{record.name} expects {record.signature}; got {count} arguments',
                               op=record.name, kind='argument')
            arguments = self._arguments
            kept = []
            first_tensor = None
            for i, value in enumerate(args):
                argument = arguments[i]
                if isinstance(value, torch.Tensor):
                    argument.type = _TENSOR
                    used = self._tensor_of(value, i, record, self._argument_tensors[i])
                    kept.append(used)
                    if first_tensor is None:
                        first_tensor = value
                elif isinstance(value, numbers.Integral) and _INT64_MIN <= value <= _INT64_MAX:
                    argument.type = _INTEGER
                    argument.integer = int(value)
                    argument.text = None
                elif isinstance(value, numbers.Integral):
                    argument.type = _LARGE_INTEGER  # beyond int64
                    argument.real = float(value) if abs(value) < 2 ** 1023 else float('inf')
                    argument.text = str(value).encode()
                elif isinstance(value, numbers.Real):
                    argument.type = _REAL
                    argument.real = float(value)
                    argument.text = repr(float(value)).encode()
                else:
                    raise RunError(f'{self._describe(record, i)}: a {type(value).__name__} is '
                                   'neither a torch tensor nor a number', op=record.name,
                                   kind='argument')
            result, copy_back = self._output_for(record, out, shape, dtype, first_tensor, torch)
            written = self._tensor_of(result, None, record, self._output_slot)
            if out is not None:
                # Refused (an output sharing part of an input's memory, say)
                # before out counts as written.
                if written is out and self._shared.rco_check_arguments(
                        self._handle, index, None, self._arguments_pointer, count,
                        self._output_pointer, self._error_pointer) != 0:
                    raise _error_of(self._error)
                _mark_written(out)
            kept.append(written)
            try:
                status = self._run(self._handle, index, self._arguments_pointer, count,
                                   self._output_pointer, seconds, self._error_pointer)
            finally:
                # Also when Ctrl-C raises KeyboardInterrupt as the call returns.
                if self._error.status in (_TIMEOUT, _INTERRUPTED):
                    _abandoned.extend(kept)
            failure = _error_of(self._error) if status != 0 else None
            measured = _profile.last(self._handle) if profile and failure is None else None
            printed, warned = self._printed, self._warned
            self._printed, self._warned = [], []
        for core, text in printed:
            self._on_print(core, text.decode(errors='replace'))
        for text in warned:
            self._on_warning(text.decode(errors='replace'))
        if failure is not None:
            raise failure
        if copy_back is not None:
            copy_back.copy_(result)
            result = copy_back
        return (result, measured) if profile else result

    @staticmethod
    def _sizes(shape, record):
        """shape= as a tuple of sizes; a number is one size, as torch.empty
        takes it."""
        sizes = (shape,) if isinstance(shape, numbers.Integral) else shape
        try:
            sizes = tuple(sizes)
        except TypeError:
            sizes = None
        if sizes is None or not all(isinstance(size, numbers.Integral) and
                                    not isinstance(size, bool) and size >= 0 for size in sizes):
            raise RunError(f'shape={shape!r}: expected the sizes of the output, whole numbers '
                           '>= 0, e.g. (2, 3)', op=record.name, kind='usage')
        return tuple(int(size) for size in sizes)

    def _output_for(self, record, out, shape, dtype, first_tensor, torch):
        """The tensor the cores write into, and the caller's out when that
        is another (a non-contiguous out is written through a copy)."""
        if out is not None:
            if shape is not None or dtype is not None:
                raise RunError('give out, or shape and dtype, not both', op=record.name,
                               kind='usage')
            if not isinstance(out, torch.Tensor):
                raise RunError(f'out is a {type(out).__name__}, not a torch tensor',
                               op=record.name, kind='usage')
            if out.is_contiguous() and not out.is_neg():
                return out, None
            if out.layout == torch.strided and torch._debug_has_internal_overlap(out) == 1:
                raise RunError(f"{record.name}'s output has elements that share memory (an "
                               'expanded tensor): the cores would write each of them more than '
                               'once; give out a tensor of its own', op=record.name,
                               kind='argument')
            # A copy, so that what the kernel does not write stays as it was.
            return out.resolve_neg().contiguous(), out
        if first_tensor is None and (shape is None or dtype is None):
            raise RunError(f'{record.name} has no tensor argument to take the output\'s shape and '
                           'dtype from; give shape= and dtype=', op=record.name, kind='usage')
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise RunError(f'dtype={dtype!r}: expected a torch dtype, e.g. torch.float32',
                           op=record.name, kind='usage')
        if shape is not None:
            shape = self._sizes(shape, record)
        number = _dtype_numbers.get(dtype if dtype is not None else first_tensor.dtype)
        if shape is None and dtype is None and first_tensor.is_contiguous():
            result = torch.empty_like(first_tensor)
        else:
            result = torch.empty(tuple(first_tensor.shape if shape is None else shape),
                                 dtype=first_tensor.dtype if dtype is None else dtype)
        if number is not None:   # else refused as an output the device cannot take
            self._shared.rco_fill_unwritten(number, result.data_ptr(), result.numel())
        return result, None
