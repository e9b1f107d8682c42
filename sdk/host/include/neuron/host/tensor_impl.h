/* neuron/host/tensor_impl.h - what an at::Tensor points to. */
#ifndef NEURON_HOST_TENSOR_IMPL_H
#define NEURON_HOST_TENSOR_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <vector>

#include "neuron/host/coherence.h"
#include "neuron/host/scalar_type.h"

namespace neuron_host {

class ElementSet;

struct TensorImpl {
    c10::ScalarType dtype;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides; // in elements
    int64_t numel;
    void *data;
    // Tensors a kernel makes own their memory (HBM on the device); the
    // arguments and the output belong to the host.
    bool owns_data;
    // Set by set_accessor_coherence_policy; shared by the tensor's copies.
    torch::CoherencyEnforcer::Policy coherence_policy = torch::CoherencyEnforcer::COHERENT;
    // What messages call the tensor: argument N (1..10), the output (-1),
    // or (0) a tensor that made_by ("zeros", "add", ...) made.
    int argument = 0;
    const char *made_by = "the kernel";
    // The core ledger follows the writes into this tensor (it is the
    // output's memory, or one the kernel made with empty()), so that the
    // output checks know which elements were written; see ledger.cpp.
    bool tracks_writes = false;
    // For a tensor made by empty(): the elements written so far (owned).
    ElementSet *written = nullptr;

    TensorImpl(c10::ScalarType dtype, const std::vector<int64_t> &sizes,
               const std::vector<int64_t> &strides, void *data, bool owns_data);
    TensorImpl(const TensorImpl &) = delete;
    TensorImpl &operator=(const TensorImpl &) = delete;
    ~TensorImpl();

    // Bytes from data to the end of the last element (strides ignored, as
    // the stream and TCM accessors ignore them).
    size_t byte_size() const { return static_cast<size_t>(numel) * c10::elementSize(dtype); }
};

} // namespace neuron_host

#endif
