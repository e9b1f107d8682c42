# customop_host_printers.py - gdb pretty-printers for the host SDK's kernel
# API, and $core(), the emulated core a frame runs on.
#
# Every core library of a host build carries this script in its
# .debug_gdb_scripts section (sdk/host/runtime/linked_core.cpp), so gdb
# runs it when it loads the library, once the library's directory is in
# gdb's auto-load safe-path ("add-auto-load-safe-path BUILD_DIR"); or
# source it: gdb -x SDK/gdb/customop_host_printers.py.  See
# run-custom-op(1), DEBUGGING A KERNEL.
#
#   print x        at::Tensor Float [2, 3] (argument 1) = {1, -2, 3, 0.5, 0, 7}
#   print a        c10::Scalar 2 (integral)
#   print in       at::TensorAccessor<float, 2> [2, 3] = {1, -2, 3, 0.5, 0, 7}
#   print stream   read stream of Float [6]: next element 2 of 6
#   break relu.cpp:12 if $core() == 7

import struct

import gdb
import gdb.printing

# How many elements a tensor shows before "...".
SHOWN = 8

# c10::ScalarType's numbers: (name, bytes, struct format; None: 16-bit floats).
DTYPES = {
    0: ('Byte', 1, 'B'), 1: ('Char', 1, 'b'), 2: ('Short', 2, 'h'), 3: ('Int', 4, 'i'),
    4: ('Long', 8, 'q'), 5: ('Half', 2, None), 6: ('Float', 4, 'f'), 15: ('BFloat16', 2, None),
}


def _half(bits):
    return struct.unpack('<e', struct.pack('<H', bits))[0]


def _bfloat16(bits):
    return struct.unpack('<f', struct.pack('<I', bits << 16))[0]


def _number(value):
    return f'{value:g}' if isinstance(value, float) else str(value)


def _read_element(address, dtype):
    _, size, code = DTYPES[dtype]
    data = bytes(gdb.selected_inferior().read_memory(address, size))
    if code is not None:
        return struct.unpack('<' + code, data)[0]
    bits = struct.unpack('<H', data)[0]
    return _half(bits) if dtype == 5 else _bfloat16(bits)


def _elements(data, dtype, sizes, strides, limit=SHOWN):
    """The first elements in index order (strides in elements), as text."""
    count = 1
    for size in sizes:
        count *= size
    if not data or dtype not in DTYPES:
        return ''
    size = DTYPES[dtype][1]
    shown = []
    for flat in range(min(count, limit)):
        offset, rest = 0, flat
        for extent, stride in zip(reversed(sizes), reversed(strides)):
            offset += (rest % extent) * stride
            rest //= extent
        try:
            shown.append(_number(_read_element(data + offset * size, dtype)))
        except gdb.MemoryError:
            shown.append('<unreadable>')
            break
    more = ', ...' if count > len(shown) else ''
    return '{' + ', '.join(shown) + more + '}'


def _vector(value):
    """A std::vector<int64_t> as a list, from libstdc++'s members."""
    start = value['_M_impl']['_M_start']
    finish = value['_M_impl']['_M_finish']
    return [int((start + i).dereference()) for i in range(int(finish - start))]


def _shared_target(pointer):
    """What a std::shared_ptr points to (a gdb.Value of the pointer), read
    without its control block, whose type clang's debug info may lack."""
    return pointer['_M_ptr']


def _dtype_name(dtype):
    return DTYPES[dtype][0] if dtype in DTYPES else f'dtype {dtype}'


def _impl_text(impl):
    """A neuron_host::TensorImpl: dtype, sizes, role and first elements."""
    dtype = int(impl['dtype'])
    sizes = _vector(impl['sizes'])
    strides = _vector(impl['strides'])
    argument = int(impl['argument'])
    if argument > 0:
        role = f' (argument {argument})'
    elif argument < 0:
        role = ' (the output)'
    else:
        made_by = impl['made_by']
        role = f' (made by {made_by.string()})' if int(made_by) else ''
    data = int(impl['data'].cast(gdb.lookup_type('unsigned long')))
    shape = '[' + ', '.join(str(size) for size in sizes) + ']'
    return f'{_dtype_name(dtype)} {shape}{role} = {_elements(data, dtype, sizes, strides)}'


class TensorPrinter:
    """at::Tensor: its dtype, sizes, what it is, and its first elements."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        pointer = _shared_target(self.value['impl_'])
        if int(pointer) == 0:
            return 'at::Tensor (undefined)'
        return 'at::Tensor ' + _impl_text(pointer.dereference())


class TensorImplPrinter:
    def __init__(self, value):
        self.value = value

    def to_string(self):
        return 'neuron_host::TensorImpl ' + _impl_text(self.value)


class ScalarPrinter:
    """c10::Scalar: the number and whether it is integral or floating."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        if bool(self.value['floating_']):
            return f"c10::Scalar {_number(float(self.value['double_']))} (floating)"
        return f"c10::Scalar {int(self.value['long_'])} (integral)"


class ElementAccessorPrinter:
    """at::TensorAccessor<T, N, read_only>: the dimensions left to index and
    the first elements under them."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        value = self.value
        kind = value.type.strip_typedefs()
        element = kind.template_argument(0)
        dims = int(kind.template_argument(1))
        read_only = bool(kind.template_argument(2))
        sizes_pointer = value['sizes_']
        strides_pointer = value['strides_']
        sizes = [int((sizes_pointer + i).dereference()) for i in range(dims)]
        strides = [int((strides_pointer + i).dereference()) for i in range(dims)]
        dtype = int(value['tensor_'].dereference()['dtype'])
        data = int(value['data_'].cast(gdb.lookup_type('unsigned long')))
        shape = '[' + ', '.join(str(size) for size in sizes) + ']'
        name = f'at::TensorAccessor<{element}, {dims}>' + (' (read-only)' if read_only else '')
        return f'{name} {shape} = {_elements(data, dtype, sizes, strides)}'


class StreamAccessorPrinter:
    """torch::TensorReadStreamAccessor<T> and TensorWriteStreamAccessor<T>:
    the tensor and where the stream is in it."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        base = self.value.cast(gdb.lookup_type('neuron_host::StreamAccessorBase'))
        writes = bool(base['writes_'])
        kind = 'write stream' if writes else 'read stream'
        state = int(base['state_'])
        impl = _shared_target(base['tensor_'])
        if state == 2 or int(impl) == 0:
            return f'{kind} (moved from)'
        tensor = impl.dereference()
        dtype = int(tensor['dtype'])
        sizes = _vector(tensor['sizes'])
        shape = '[' + ', '.join(str(size) for size in sizes) + ']'
        if state == 1:
            return f'{kind} of {_dtype_name(dtype)} {shape}: closed'
        size = int(base['element_size_'])
        data = int(tensor['data'].cast(gdb.lookup_type('unsigned long')))
        start = int(base['next_'].cast(gdb.lookup_type('unsigned long')))
        end = int(base['end_'].cast(gdb.lookup_type('unsigned long')))
        position = (start - data) // size
        total = (end - data) // size
        return f'{kind} of {_dtype_name(dtype)} {shape}: next element {position} of {total}'


class TcmAccessorPrinter:
    """torch::TensorTcmAccessor<read_only>: the tensor it copies to and from TCM."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        read_only = bool(self.value.type.strip_typedefs().template_argument(0))
        impl = _shared_target(self.value['tensor_'])
        name = 'tcm_accessor' + (' (read-only)' if read_only else '')
        if int(impl) == 0:
            return f'{name} (no tensor)'
        return f'{name} of {_impl_text(impl.dereference())}'


def _printers():
    printers = gdb.printing.RegexpCollectionPrettyPrinter('build-custom-op host SDK')
    printers.add_printer('at::Tensor', '^at::Tensor$', TensorPrinter)
    printers.add_printer('TensorImpl', '^neuron_host::TensorImpl$', TensorImplPrinter)
    printers.add_printer('c10::Scalar', '^c10::Scalar$', ScalarPrinter)
    printers.add_printer('TensorAccessor', '^at::TensorAccessor<.*>$', ElementAccessorPrinter)
    printers.add_printer('stream accessors', '^at::Tensor(Read|Write)StreamAccessor<.*>$',
                         StreamAccessorPrinter)
    printers.add_printer('TensorTcmAccessor', '^at::TensorTcmAccessor<.*>$', TcmAccessorPrinter)
    return printers


class CoreFunction(gdb.Function):
    """$core(): the emulated GPSIMD core (0 to 7) whose library the selected
    frame is in, as get_cpu_id() gives it: 0 in a single-core build; -1 when
    no core library is loaded.  Usage: break relu.cpp:12 if $core() == 7"""

    def __init__(self):
        super().__init__('core')

    def invoke(self):
        try:
            # The symbol of the frame's own library: each core library has one.
            linked = int(gdb.parse_and_eval('customop_host_core_of_link'))
        except gdb.error:
            return -1
        return max(linked, 0)


# Once per gdb, however many core libraries carry this script.
if not getattr(gdb, '_customop_host_printers', False):
    gdb._customop_host_printers = True
    gdb.printing.register_pretty_printer(None, _printers(), replace=True)
    CoreFunction()
