/* factories.cpp - empty, full, zeros, ones and eye. */
#include <stdlib.h>
#include <string.h>
#include <memory>

#include "elements.h"
#include "ledger.h"
#include "runtime.h"
#include "torch/torch.h"

namespace neuron_host {

at::Tensor make_tensor(c10::ScalarType type, c10::IntArrayRef sizes, const char *what)
{
    if (!c10::isDeviceType(static_cast<int>(type)))
        violation("%s: dtype %d is not one of the device's 8 dtypes", what, static_cast<int>(type));
    std::vector<int64_t> strides(sizes.size());
    int64_t count = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
        if (sizes[d] < 0)
            violation("%s: negative size %lld", what, static_cast<long long>(sizes[d]));
        strides[d] = count;
        count *= sizes[d];
    }
    size_t bytes = static_cast<size_t>(count) * c10::elementSize(type);
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        violation("%s: cannot allocate %zu bytes", what, bytes);
    // HBM holds whatever was there before; all-ones bytes (NaN, or -1) make
    // a kernel that reads elements it never wrote give visibly wrong results.
    memset(data, 0xff, bytes);
    if (type == c10::kLong)
        warn_64_bit_tensor();
    auto impl = std::make_shared<TensorImpl>(type, sizes.vec(), strides, data, true);
    impl->made_by = what;
    return TensorInternals::wrap(std::move(impl));
}

} // namespace neuron_host

namespace at {

namespace {

// The options a factory was given, which must name a dtype.
ScalarType dtype_of(TensorOptions options, const char *what)
{
    if (!options.has_dtype())
        neuron_host::violation("%s: the TensorOptions name no dtype: the device's API reference requires one, e.g. "
                               "torch::%s(..., torch::kFloat)", what, what);
    return options.dtype();
}

Tensor filled(IntArrayRef sizes, const Scalar &value, TensorOptions options, const char *what)
{
    Tensor tensor = neuron_host::make_tensor(dtype_of(options, what), sizes, what);
    neuron_host::TensorImpl &impl = neuron_host::TensorInternals::impl(tensor);
    size_t size = c10::elementSize(impl.dtype);
    if (impl.numel == 0)
        return tensor;
    char *first = static_cast<char *>(impl.data);
    if (value.isFloatingPoint())
        neuron_host::element_store_double(first, impl.dtype, value.toDouble());
    else
        neuron_host::element_store_integer(first, impl.dtype, value.toLong());
    for (int64_t i = 1; i < impl.numel; i++)
        memcpy(first + static_cast<size_t>(i) * size, first, size);
    neuron_host::ledger_elementwise(impl.numel, impl.byte_size());
    return tensor;
}

} // namespace

Tensor empty(IntArrayRef sizes, TensorOptions options)
{
    Tensor tensor = neuron_host::make_tensor(dtype_of(options, "empty"), sizes, "empty");
    neuron_host::ledger_track(neuron_host::TensorInternals::impl(tensor), true);
    return tensor;
}

Tensor full(IntArrayRef sizes, const Scalar &value, TensorOptions options)
{
    return filled(sizes, value, options, "full");
}

Tensor zeros(IntArrayRef sizes, TensorOptions options)
{
    return filled(sizes, 0, options, "zeros");
}

Tensor ones(IntArrayRef sizes, TensorOptions options)
{
    return filled(sizes, 1, options, "ones");
}

Tensor eye(int64_t n, TensorOptions options)
{
    return eye(n, n, options);
}

Tensor eye(int64_t n, int64_t m, TensorOptions options)
{
    Tensor tensor = filled({n, m}, 0, options, "eye");
    neuron_host::TensorImpl &impl = neuron_host::TensorInternals::impl(tensor);
    for (int64_t i = 0; i < n && i < m; i++)
        neuron_host::element_store_integer(neuron_host::element_address(impl, i * m + i), impl.dtype, 1);
    return tensor;
}

} // namespace at
