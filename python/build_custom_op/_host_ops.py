"""_host_ops.py - torch.ops.<ns>.<op> on the host target: the op's kernel
runs on the emulated GPSIMD cores through build_custom_op.runner.

A registered op takes the op's arguments (tensors and Python numbers),
refuses what the device could not take (a tensor on another device, a dtype
the device does not have, a tensor where a number goes), asks the shape
function for the output's sizes and dtype, and runs the kernel into an
output allocated from them: the tensor get_dst_tensor() returns on the
device.  The runner converts each number by the schema's kind (Scalar,
float, int, long long) and raises runner.RunError with the core, the op and
the rule when the kernel breaks one.  Imports torch.
"""

import numbers
import threading

import torch

# The dtypes of the device's tensors, in the order the docs list them.
DEVICE_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int8,
                 torch.int64, torch.int16, torch.uint8)
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
_KIND_NAMES = {'T': 'Tensor', 'S': 'Scalar', 'i': 'int', 'f': 'float', 'l': 'long long'}


def _dtype_names():
    return ', '.join(str(dtype).replace('torch.', '') for dtype in DEVICE_DTYPES)


class HostLibrary:
    """The compute library of a bundle, opened once through the runner;
    calls of its ops run one at a time."""

    def __init__(self, path, runner):
        self.path = path
        self.runner = runner
        self.library = runner.open(path)
        self.lock = threading.Lock()
        self.kinds = {op.name: op.kinds for op in self.library.ops}
        self.signatures = {op.name: op.signature for op in self.library.ops}

    def run(self, fn, args, shape, dtype):
        with self.lock:
            try:
                return self.library.run(fn, *args, shape=shape, dtype=dtype)
            except self.runner.RunError as error:
                # After a time limit the runner stops the cores and its
                # library runs no more ops: the next call gets a new one.
                if getattr(error, 'kind', None) == 'timeout':
                    self.library.close()
                    self.library = self.runner.open(self.path)
                raise


class HostOp:
    """torch.ops.NS.OP on the host target."""

    def __init__(self, op, schema, shape_function, library):
        self.__name__ = op.op
        self.__qualname__ = op.qualified
        self.qualified = op.qualified
        self.fn = op.fn
        self.schema = schema
        self.shape_function = shape_function
        self.library = library
        if op.fn not in library.kinds:
            raise LookupError(f'{library.path} has no compute function {op.fn} for op '
                              f'{op.qualified}')
        self.kinds = library.kinds[op.fn]
        self.signature = library.signatures[op.fn]
        self.__doc__ = (f'{op.qualified}: runs the compute function {op.fn}{self.signature} '
                        'on the emulated GPSIMD cores.')

    def __repr__(self):
        return f'<custom op {self.qualified} on the host emulator ({self.fn}{self.signature})>'

    def _describe(self, index):
        return f'argument {index + 1} ({_KIND_NAMES[self.kinds[index]]}) of {self.qualified}'

    def _check(self, args):
        if len(args) != len(self.kinds):
            raise TypeError(f'{self.qualified}{self.signature} takes {len(self.kinds)} '
                            f'argument{"s" if len(self.kinds) != 1 else ""}, '
                            f'but {len(args)} were given')
        for index, (kind, value) in enumerate(zip(self.kinds, args)):
            if kind == 'T':
                if not isinstance(value, torch.Tensor):
                    raise TypeError(f'{self._describe(index)} must be a torch.Tensor, '
                                    f'not {type(value).__name__}')
                if value.device.type != 'cpu':
                    raise ValueError(f'{self._describe(index)} is on {value.device}; the '
                                     'host emulator runs on CPU tensors: pass it with .cpu()')
                if value.dtype not in DEVICE_DTYPES:
                    raise ValueError(f'{self._describe(index)} has dtype '
                                     f'{str(value.dtype).replace("torch.", "")}, which the '
                                     f'device does not have; its dtypes are {_dtype_names()}')
                if value.is_sparse or value.layout != torch.strided:
                    raise ValueError(f'{self._describe(index)} is a {value.layout} tensor; '
                                     'the device takes dense (strided) tensors')
            else:
                if isinstance(value, torch.Tensor) or not isinstance(value, numbers.Number) \
                        or isinstance(value, complex):
                    hint = '; use .item() for a one-element tensor' \
                        if isinstance(value, torch.Tensor) else ''
                    raise TypeError(f'{self._describe(index)} must be a Python number, not '
                                    f'{type(value).__name__}{hint}')
                if kind in 'il' and not isinstance(value, numbers.Integral):
                    raise TypeError(f'{self._describe(index)} must be an integer, not '
                                    f'{value!r}')
                if isinstance(value, numbers.Integral) and not _INT64_MIN <= value <= _INT64_MAX:
                    raise ValueError(f'{self._describe(index)} is {value}, out of the int64 '
                                     'range of the shape function')

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f'{self.qualified} takes its arguments by position, not by name '
                            f'({", ".join(kwargs)})')
        self._check(args)
        with torch.no_grad():
            result = self.shape_function(*args)
        if not isinstance(result, torch.Tensor):
            raise TypeError(f'the shape function of {self.qualified} returned '
                            f'{type(result).__name__}, not a tensor')
        if result.dtype not in DEVICE_DTYPES:
            raise ValueError(f'the shape function of {self.qualified} returned dtype '
                             f'{str(result.dtype).replace("torch.", "")}, which the device '
                             f'does not have; its dtypes are {_dtype_names()}')
        with torch.no_grad():
            return self.library.run(self.fn, args, tuple(result.shape), result.dtype)
