"""_host_ops.py - torch.ops.<ns>.<op> on the host target: PyTorch's own
operators whose CPU kernel runs the op's compute function on the emulated
GPSIMD cores.

The kernels are those of the bridge, sdk/torchneuron/bridge/torch_bridge.cpp,
a C++ library compiled against this process's PyTorch once per version and
kept in the cache of _torch_build.py.  It calls libruncustomop itself (the
functions of build_custom_op.runner's copy of it, given at start): no
Python runs in a call, except to hand over what a kernel printed and to
make the exception of a failed call.  This module builds and loads the
bridge, opens each bundle's compute library through it and registers the
ops; the checks of a call are the bridge's and the runner's (run/check.c).

Exceptions a call raises: RuntimeError when PyTorch's schema refuses an
argument; TypeError for a complex number; ValueError for a tensor the
device cannot take (another device, a dtype the device does not have, a
sparse layout) or a shape function that returns such a dtype;
RuntimeError when an input has a forward-mode tangent, and from a
backward through an op (the op has no derivative: call it inside a
torch.autograd.Function); and
build_custom_op.runner.RunError (a RuntimeError) with the runner's core, op
and kind for what the runner reports: a number out of its kind's range, a
fault or broken device rule in the kernel, an output element no core wrote
('op'), a time limit ('timeout'); and KeyboardInterrupt when Ctrl-C stops a
call (the next call opens the build again).  Called from TorchScript, each
becomes the interpreter's RuntimeError with the same message.  On a thread
Python did not start (a C++ caller's), RunError is a RuntimeError of the
runner's message and what the kernel printed goes to the standard streams.
Imports torch.
"""

import ctypes
import os
import sys
import threading
import warnings

import torch

from build_custom_op import _torch_build
from build_custom_op import _torch_kit
from build_custom_op import _library
from build_custom_op._library import installed_directory, source_tree

TIMEOUT_VARIABLE = 'CUSTOM_OP_TIMEOUT'
_BRIDGE_SOURCE = 'torch_bridge.cpp'
_RUNNER_HEADER = 'runcustomop.h'
_MESSAGE_SIZE = 16384
# The runner's functions the bridge calls, in the order of its struct Runner.
_RUNNER_FUNCTIONS = ('rco_open', 'rco_close', 'rco_op_index', 'rco_op_kinds',
                     'rco_op_signature', 'rco_run_named', 'rco_device_dtype',
                     'rco_fill_unwritten', 'rco_describe_argument', 'rco_accept_tensor',
                     'rco_output_checks_default')


class RegistrationError(Exception):
    """The bridge could not be built, or a bundle's ops not registered.
    kind is the runner's (runner.RunError.kind) when it could not open the
    build, else None."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = kind


def _bridge_files():
    """(the bridge's source, the directory of runcustomop.h): the source
    tree's (in the source tree's copy of the package), else the install's."""
    candidates = []
    tree = source_tree()
    if tree is not None:
        candidates.append((os.path.join(tree, 'sdk', 'torchneuron', 'bridge', _BRIDGE_SOURCE),
                           os.path.join(tree, 'include')))
    else:
        candidates.append((os.path.join(installed_directory('DATADIR'),
                                        'build-custom-op', _BRIDGE_SOURCE),
                           installed_directory('INCLUDEDIR')))
    for source, include in candidates:
        if os.path.isfile(source) and os.path.isfile(os.path.join(include, _RUNNER_HEADER)):
            return source, include
    raise RegistrationError(f'cannot find {_BRIDGE_SOURCE} and {_RUNNER_HEADER} (looked in '
                            f'{", ".join(os.path.dirname(s) for s, _ in candidates)}); run make '
                            'in the build-custom-op source tree, or make install')


def _caller_stacklevel():
    """The stacklevel of warnings.warn, called here, that points at the first
    caller outside this package and PyTorch's op wrappers."""
    torch_directory = os.path.dirname(torch.__file__) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
            frame.f_globals.get('__name__', '').startswith('build_custom_op')
            or frame.f_code.co_filename.startswith(torch_directory)):
        frame = frame.f_back
        level += 1
    return level


def _hand_over(printed, warned):
    """The bridge's print hook: what the cores printed and the runtime's
    warnings, after a call, as runner.open()'s defaults show them."""
    from build_custom_op import runner   # not before an op prints
    for core, text in printed:
        runner._print_as_the_runner_does(core, text.decode(errors='replace'))
    for text in warned:
        warnings.warn(text.decode(errors='replace'), runner.RunWarning,
                      stacklevel=_caller_stacklevel())


def _run_error(status, core, signal, op, message):
    """The bridge's error hook: the exception of a call the runner failed."""
    from build_custom_op import _run_binding   # not before a call fails
    return _run_binding._run_error(status, core, signal, op.decode(errors='replace'),
                             message.decode(errors='replace'))


def _runner_library():
    """libruncustomop as runner.py uses it (the process's one load of it),
    checked to have the functions the bridge takes, whose addresses are all
    it needs: neither their declarations nor the copies of the library's
    structures (_run_types.py) are made for it."""
    def has_functions(library):
        for name in _RUNNER_FUNCTIONS:
            getattr(library, name)
    try:
        return _library.shared(_library.RUNNER_FILE, _library.RUNNER_VARIABLE, has_functions)
    except _library.LibraryNotFound as error:
        from build_custom_op import _run_binding
        raise _run_binding.RunError(str(error), kind='system') from None


def _status_name(status):
    """The RunError kind of the runner's status."""
    from build_custom_op import _run_binding
    return _run_binding._STATUS_NAMES.get(status, 'system')


class _Bridge:
    """The bridge library, loaded and started once per process."""

    def __init__(self):
        source, include = _bridge_files()
        try:
            path, _ = _torch_build.build('bridge', 'torch_bridge', [source],
                                         _torch_kit.BRIDGE_FLAGS, [include], False)
        except _torch_build.TorchBuildError as error:
            raise RegistrationError(f'building the bridge of host ops: {error}') from None
        python_side = ctypes.PyDLL(path)   # keeps the GIL: init takes Python objects
        library = ctypes.CDLL(path)
        python_side.torch_bridge_init.argtypes = [ctypes.c_void_p, ctypes.py_object,
                                                  ctypes.py_object]
        python_side.torch_bridge_init.restype = ctypes.c_int
        library.torch_bridge_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double,
                                              ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                                              ctypes.c_size_t]
        library.torch_bridge_open.restype = ctypes.c_void_p
        library.torch_bridge_register.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                  ctypes.c_char_p, ctypes.c_char_p,
                                                  ctypes.c_size_t]
        library.torch_bridge_register.restype = ctypes.c_int
        library.torch_bridge_release.argtypes = [ctypes.c_void_p]
        library.torch_bridge_release.restype = None
        shared = _runner_library()
        functions = (ctypes.c_void_p * len(_RUNNER_FUNCTIONS))(
            *[ctypes.cast(getattr(shared, name), ctypes.c_void_p).value
              for name in _RUNNER_FUNCTIONS])
        python_side.torch_bridge_init(functions, _hand_over, _run_error)
        self.path = path
        self.library = library

    def register(self, base, ops, timeout):
        """Opens the host build at base and has each op (an Op of
        _shape_library) run its compute function there."""
        status = ctypes.c_int()
        message = ctypes.create_string_buffer(_MESSAGE_SIZE)
        handle = self.library.torch_bridge_open(os.fsencode(base), 0, timeout or 0.0,
                                                ctypes.byref(status), message, _MESSAGE_SIZE)
        if not handle:
            raise RegistrationError(message.value.decode(errors='replace'),
                                    _status_name(status.value))
        try:
            for op in ops:
                if self.library.torch_bridge_register(handle, op.qualified.encode(),
                                                      op.fn.encode(), message,
                                                      _MESSAGE_SIZE) != 0:
                    raise RegistrationError(message.value.decode(errors='replace'))
        finally:
            self.library.torch_bridge_release(handle)


_bridge = None
_bridge_lock = threading.Lock()


def _after_fork():
    global _bridge_lock
    _bridge_lock = threading.Lock()   # another thread of the parent may have held it


os.register_at_fork(after_in_child=_after_fork)


def bridge():
    """The process's _Bridge."""
    global _bridge
    with _bridge_lock:
        if _bridge is None:
            _bridge = _Bridge()
        return _bridge


def register(base, ops, timeout=None):
    """Has torch.ops.<ns>.<op> of each op run its compute function of the
    host build at base (BUILD_DIR/NAME), each call within timeout seconds
    (None: no limit).  Raises RegistrationError."""
    bridge().register(base, ops, timeout)
    for op in ops:
        namespace = getattr(torch.ops, op.namespace)
        current = namespace.__dict__.get(op.op)
        if current is not None and not isinstance(current, torch._ops.OpOverloadPacket):
            delattr(namespace, op.op)   # what an earlier load of a device build put there
        _let_symbolic_sizes_reach_the_meta_kernel(getattr(namespace, op.op).default)


def _let_symbolic_sizes_reach_the_meta_kernel(overload):
    """PyTorch 1.13's FakeTensorMode runs an op's Meta kernel on tensors
    with symbolic sizes (make_fx's symbolic tracing) only for the ops of a
    list of its own, or through a Python function of
    torch._meta_registrations.meta_table; for a host op, this puts there
    one that runs the bridge's Meta kernel (which specialises the sizes the
    shape function reads) and makes the fake output of its sizes and dtype.
    PyTorch 2.x runs the Meta kernel itself."""
    from torch._subclasses import fake_tensor
    if not hasattr(fake_tensor.FakeTensorMode, 'functions_with_cpp_meta_impl_that_support_symint'):
        return
    from torch._meta_registrations import meta_table
    from torch.utils._mode_utils import no_dispatch

    def fake_output(*args, **kwargs):
        tensors = [arg for arg in args if isinstance(arg, fake_tensor.FakeTensor)]
        with no_dispatch(), fake_tensor.in_kernel_invocation_manager(tensors[0].fake_mode):
            output = overload(*args, **kwargs)
        # Under the fake mode again: a fake tensor on the inputs' device.
        return torch.empty(output.shape, dtype=output.dtype, device=tensors[0].device)

    meta_table.setdefault(overload, fake_output)
