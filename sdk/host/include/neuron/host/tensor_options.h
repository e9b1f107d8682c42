/* neuron/host/tensor_options.h - TensorOptions: of the options only dtype counts. */
#ifndef NEURON_HOST_TENSOR_OPTIONS_H
#define NEURON_HOST_TENSOR_OPTIONS_H

#include "neuron/host/scalar_type.h"

namespace c10 {

// The device has one memory and no autograd, so dtype is the only option a
// factory reads (device-facts.md: "of the options only dtype counts").
class TensorOptions {
public:
    // The device's reference requires a dtype; a factory given options
    // without one stops the op.
    TensorOptions() : dtype_(kFloat), has_dtype_(false) {}
    TensorOptions(ScalarType dtype) : dtype_(dtype), has_dtype_(true) {}

    TensorOptions dtype(ScalarType dtype) const
    {
        TensorOptions copy = *this;
        copy.dtype_ = dtype;
        copy.has_dtype_ = true;
        return copy;
    }
    ScalarType dtype() const { return dtype_; }
    bool has_dtype() const { return has_dtype_; }

private:
    ScalarType dtype_;
    bool has_dtype_;
};

inline TensorOptions dtype(ScalarType type) { return TensorOptions(type); }

} // namespace c10

#endif
