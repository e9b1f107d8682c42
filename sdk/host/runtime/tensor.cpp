/* tensor.cpp - at::Tensor's out-of-line parts and its storage. */
#include <stdlib.h>

#include "element_set.h"
#include "elements.h"
#include "ledger.h"
#include "runtime.h"

namespace neuron_host {

TensorImpl::TensorImpl(c10::ScalarType dtype_, const std::vector<int64_t> &sizes_,
                       const std::vector<int64_t> &strides_, void *data_, bool owns_data_)
    : dtype(dtype_), sizes(sizes_), strides(strides_), numel(1), data(data_), owns_data(owns_data_)
{
    for (int64_t size : sizes)
        numel *= size;
}

TensorImpl::~TensorImpl()
{
    ledger_forget(*this);
    if (owns_data)
        free(data);
    delete written;
}

const char *cpp_type_name(c10::ScalarType type)
{
    switch (type) {
    case c10::ScalarType::Byte: return "uint8_t";
    case c10::ScalarType::Char: return "int8_t";
    case c10::ScalarType::Short: return "int16_t";
    case c10::ScalarType::Int: return "int32_t";
    case c10::ScalarType::Long: return "int64_t";
    case c10::ScalarType::Half: return "at::Half";
    case c10::ScalarType::Float: return "float";
    case c10::ScalarType::BFloat16: return "at::BFloat16";
    }
    return "?";
}

void warn_element_type(const TensorImpl &tensor, const char *accessor, c10::ScalarType type)
{
    if (type == tensor.dtype)
        return;
    warning("%s<%s>() on %s, whose dtype is %s: its bytes are taken as %s, not converted (as on the device); use "
            "%s<%s>() for it, or give the tensor the dtype %s",
            accessor, cpp_type_name(type), describe_tensor(tensor).c_str(), c10::toString(tensor.dtype),
            cpp_type_name(type), accessor, cpp_type_name(tensor.dtype), c10::toString(type));
}

std::string describe_argument(int number)
{
    std::string text = "argument " + std::to_string(number);
    customop_host_call *call = current_call();
    if (call && call->arg_names && number >= 1 && number <= call->arg_count && call->arg_names[number - 1])
        text += std::string(" (") + call->arg_names[number - 1] + ")";
    return text;
}

std::string describe_tensor(const TensorImpl &tensor)
{
    if (tensor.argument > 0)
        return describe_argument(tensor.argument);
    if (tensor.argument < 0)
        return "the output";
    return std::string("a tensor made by ") + tensor.made_by;
}

} // namespace neuron_host

namespace at {

bool Tensor::is_contiguous() const
{
    const neuron_host::TensorImpl &tensor = impl();
    int64_t expected = 1;
    for (size_t d = tensor.sizes.size(); d-- > 0;) {
        if (tensor.sizes[d] != 1 && tensor.strides[d] != expected)
            return false;
        expected *= tensor.sizes[d];
    }
    return true;
}

size_t Tensor::wrap_dim(int64_t dim) const
{
    int64_t rank = this->dim();
    int64_t wrapped = dim < 0 ? dim + rank : dim;
    if (wrapped < 0 || wrapped >= rank)
        neuron_host::violation("dimension %lld is out of range for a tensor of dim() %lld",
                               static_cast<long long>(dim), static_cast<long long>(rank));
    return static_cast<size_t>(wrapped);
}

void Tensor::check_accessor(ScalarType element_type, size_t dims) const
{
    const char *name = neuron_host::cpp_type_name(element_type);
    if (neuron_host::multicore_build())
        neuron_host::violation("accessor<%s,%zu>(): a multicore build supports only the TCM accessor "
                               "(tcm_accessor()); element and stream accessors are undefined behaviour on the "
                               "device's cores in SPMD mode", name, dims);
    if (static_cast<size_t>(dim()) != dims)
        neuron_host::violation("accessor<%s,%zu>(): the tensor has dim() %lld, not %zu", name, dims,
                               static_cast<long long>(dim()), dims);
    if (scalar_type() != element_type)
        neuron_host::violation("accessor<%s,%zu>(): the tensor's dtype is %s, not %s", name, dims,
                               c10::toString(scalar_type()), c10::toString(element_type));
}

Tensor &Tensor::fill_(const Scalar &value) const
{
    const neuron_host::TensorImpl &tensor = impl();
    neuron_host::windows_sync(tensor.data, tensor.byte_size());
    for (int64_t i = 0; i < tensor.numel; i++) {
        char *element = neuron_host::element_address(tensor, i);
        if (value.isFloatingPoint())
            neuron_host::element_store_double(element, tensor.dtype, value.toDouble());
        else
            neuron_host::element_store_integer(element, tensor.dtype, value.toLong());
    }
    neuron_host::ledger_elementwise(tensor.numel, tensor.byte_size());
    neuron_host::ledger_write(tensor, tensor.data, tensor.byte_size());
    neuron_host::windows_refresh(tensor.data, tensor.byte_size());
    return const_cast<Tensor &>(*this);
}

} // namespace at
