/* elements.cpp - reading and writing one element of any device dtype. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "elements.h"
#include "runtime.h"

namespace neuron_host {
namespace {

template <typename T> T load(const void *element)
{
    T value;
    memcpy(&value, element, sizeof value);
    return value;
}

template <typename T> void store(void *element, T value)
{
    memcpy(element, &value, sizeof value);
}

// C++ leaves a float-to-integer conversion out of range undefined; the
// emulator saturates (NaN gives 0) so the result is at least repeatable.
int64_t saturate(double value)
{
    if (value != value)
        return 0;
    if (value >= 9223372036854775807.0)
        return INT64_MAX;
    if (value <= -9223372036854775808.0)
        return INT64_MIN;
    return static_cast<int64_t>(value);
}

} // namespace

double element_load_double(const void *element, c10::ScalarType type)
{
    switch (type) {
    case c10::ScalarType::Half: return static_cast<float>(load<c10::Half>(element));
    case c10::ScalarType::Float: return load<float>(element);
    case c10::ScalarType::BFloat16: return static_cast<float>(load<c10::BFloat16>(element));
    default: return static_cast<double>(element_load_integer(element, type));
    }
}

int64_t element_load_integer(const void *element, c10::ScalarType type)
{
    switch (type) {
    case c10::ScalarType::Byte: return load<uint8_t>(element);
    case c10::ScalarType::Char: return load<int8_t>(element);
    case c10::ScalarType::Short: return load<int16_t>(element);
    case c10::ScalarType::Int: return load<int32_t>(element);
    case c10::ScalarType::Long: return load<int64_t>(element);
    default: return saturate(element_load_double(element, type));
    }
}

void element_store_double(void *element, c10::ScalarType type, double value)
{
    switch (type) {
    case c10::ScalarType::Half: store(element, c10::Half(static_cast<float>(value))); break;
    case c10::ScalarType::Float: store(element, static_cast<float>(value)); break;
    case c10::ScalarType::BFloat16: store(element, c10::BFloat16(static_cast<float>(value))); break;
    default: element_store_integer(element, type, saturate(value)); break;
    }
}

void element_store_integer(void *element, c10::ScalarType type, int64_t value)
{
    // Narrowing keeps the low bits, as integer conversion does on the device.
    uint64_t bits = static_cast<uint64_t>(value);
    switch (type) {
    case c10::ScalarType::Byte: store(element, static_cast<uint8_t>(bits)); break;
    case c10::ScalarType::Char: store(element, static_cast<int8_t>(static_cast<uint8_t>(bits))); break;
    case c10::ScalarType::Short: store(element, static_cast<int16_t>(static_cast<uint16_t>(bits))); break;
    case c10::ScalarType::Int: store(element, static_cast<int32_t>(static_cast<uint32_t>(bits))); break;
    case c10::ScalarType::Long: store(element, value); break;
    default: element_store_double(element, type, static_cast<double>(value)); break;
    }
}

int64_t element_count(const customop_host_tensor &tensor)
{
    int64_t count = 1;
    for (int d = 0; d < tensor.rank; d++)
        count *= tensor.sizes[d];
    return count;
}

size_t byte_count(const customop_host_tensor &tensor)
{
    return static_cast<size_t>(element_count(tensor)) * c10::elementSize(static_cast<c10::ScalarType>(tensor.dtype));
}

char *element_address(const TensorImpl &tensor, int64_t index)
{
    int64_t offset = 0;
    for (size_t d = tensor.sizes.size(); d-- > 0;) {
        int64_t size = tensor.sizes[d];
        offset += (index % size) * tensor.strides[d];
        index /= size;
    }
    return static_cast<char *>(tensor.data) + offset * static_cast<int64_t>(c10::elementSize(tensor.dtype));
}

std::string format_sizes(const std::vector<int64_t> &sizes)
{
    std::string text = "[";
    for (size_t d = 0; d < sizes.size(); d++) {
        if (d > 0)
            text += ", ";
        text += std::to_string(sizes[d]);
    }
    return text + "]";
}

} // namespace neuron_host
