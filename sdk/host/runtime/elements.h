/* elements.h - element access for the runtime's tensor code (not part of
 * the SDK's API). */
#ifndef CUSTOMOP_HOST_ELEMENTS_H
#define CUSTOMOP_HOST_ELEMENTS_H

#include <stdint.h>
#include <string>
#include <vector>

#include "neuron/host/tensor.h"
#include "neuron/host_abi.h"

namespace neuron_host {

// elements.cpp: one element of any device dtype, as a double or an integer.
double element_load_double(const void *element, c10::ScalarType type);
int64_t element_load_integer(const void *element, c10::ScalarType type);
void element_store_double(void *element, c10::ScalarType type, double value);
void element_store_integer(void *element, c10::ScalarType type, int64_t value);
// The elements and the bytes of a tensor as the host passes it.
int64_t element_count(const customop_host_tensor &tensor);
size_t byte_count(const customop_host_tensor &tensor);
// The address of the element at a row-major index, following the strides.
char *element_address(const TensorImpl &tensor, int64_t index);
// "[2, 3]"
std::string format_sizes(const std::vector<int64_t> &sizes);

// tensor.cpp: the C++ element type a kernel writes for a dtype ("float").
const char *cpp_type_name(c10::ScalarType type);
// tensor.cpp: what messages call a tensor: "argument 2 (Tensor y)" (the
// name as the op's schema writes it, when the runner gave it), "the
// output", "a tensor made by zeros".
std::string describe_tensor(const TensorImpl &tensor);
// tensor.cpp: warns when a stream or a TCM copy (accessor: its name,
// "read_stream_accessor") of element type type is used on a tensor of
// another dtype: its bytes are taken as they are, as on the device.
void warn_element_type(const TensorImpl &tensor, const char *accessor, c10::ScalarType type);
// tensor.cpp: "argument 2 (Tensor y)", or "argument 2", for argument
// number (counted from 1) of the call in progress.
std::string describe_argument(int number);

// factories.cpp: a new contiguous tensor owning uninitialised memory.
at::Tensor make_tensor(c10::ScalarType type, c10::IntArrayRef sizes, const char *what);

} // namespace neuron_host

#endif
