/* neuron/host/functions.h - the factories and element-wise ops of the device.
 * No broadcasting: operands (and an _out tensor) must have equal shapes. */
#ifndef NEURON_HOST_FUNCTIONS_H
#define NEURON_HOST_FUNCTIONS_H

#include <stdint.h>

#include "neuron/host/array_ref.h"
#include "neuron/host/scalar.h"
#include "neuron/host/tensor.h"
#include "neuron/host/tensor_options.h"

namespace at {

using c10::Scalar;

// Factories (uninitialised, filled, identity).  The device's reference
// requires the dtype: a call without options does not compile, and options
// without a dtype stop the op.
Tensor empty(IntArrayRef sizes, TensorOptions options);
Tensor full(IntArrayRef sizes, const Scalar &value, TensorOptions options);
Tensor zeros(IntArrayRef sizes, TensorOptions options);
Tensor ones(IntArrayRef sizes, TensorOptions options);
Tensor eye(int64_t n, TensorOptions options);
Tensor eye(int64_t n, int64_t m, TensorOptions options);

template <typename Missing = void> Tensor empty(IntArrayRef)
{
    static_assert(sizeof(Missing *) == 0, "torch::empty needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::empty(sizes, torch::kFloat)");
    return Tensor();
}
template <typename Missing = void> Tensor full(IntArrayRef, const Scalar &)
{
    static_assert(sizeof(Missing *) == 0, "torch::full needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::full(sizes, value, torch::kFloat)");
    return Tensor();
}
template <typename Missing = void> Tensor zeros(IntArrayRef)
{
    static_assert(sizeof(Missing *) == 0, "torch::zeros needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::zeros(sizes, torch::kFloat)");
    return Tensor();
}
template <typename Missing = void> Tensor ones(IntArrayRef)
{
    static_assert(sizeof(Missing *) == 0, "torch::ones needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::ones(sizes, torch::kFloat)");
    return Tensor();
}
template <typename Missing = void> Tensor eye(int64_t)
{
    static_assert(sizeof(Missing *) == 0, "torch::eye needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::eye(n, torch::kFloat)");
    return Tensor();
}
template <typename Missing = void> Tensor eye(int64_t, int64_t)
{
    static_assert(sizeof(Missing *) == 0, "torch::eye needs a dtype: the device's API reference requires "
                                          "the options, e.g. torch::eye(n, m, torch::kFloat)");
    return Tensor();
}

// Unary ops; sin .. exp give Float for integer input, as PyTorch does.
Tensor abs(const Tensor &self);
Tensor ceil(const Tensor &self);
Tensor floor(const Tensor &self);
Tensor sin(const Tensor &self);
Tensor cos(const Tensor &self);
Tensor tan(const Tensor &self);
Tensor log(const Tensor &self);
Tensor log2(const Tensor &self);
Tensor log10(const Tensor &self);
Tensor exp(const Tensor &self);
Tensor bitwise_not(const Tensor &self);
Tensor &abs_out(Tensor &out, const Tensor &self);
Tensor &ceil_out(Tensor &out, const Tensor &self);
Tensor &floor_out(Tensor &out, const Tensor &self);
Tensor &sin_out(Tensor &out, const Tensor &self);
Tensor &cos_out(Tensor &out, const Tensor &self);
Tensor &tan_out(Tensor &out, const Tensor &self);
Tensor &log_out(Tensor &out, const Tensor &self);
Tensor &log2_out(Tensor &out, const Tensor &self);
Tensor &log10_out(Tensor &out, const Tensor &self);
Tensor &exp_out(Tensor &out, const Tensor &self);
Tensor &bitwise_not_out(Tensor &out, const Tensor &self);

// clamp(self, min, max) and pow (a Scalar base gives Float for an integer
// exponent tensor when the base is floating, as in PyTorch).
Tensor clamp(const Tensor &self, const Scalar &min, const Scalar &max);
Tensor &clamp_out(Tensor &out, const Tensor &self, const Scalar &min, const Scalar &max);
Tensor pow(const Tensor &self, const Tensor &exponent);
Tensor pow(const Tensor &self, const Scalar &exponent);
Tensor &pow_out(Tensor &out, const Tensor &self, const Tensor &exponent);
Tensor &pow_out(Tensor &out, const Tensor &self, const Scalar &exponent);
Tensor pow(const Scalar &self, const Tensor &exponent);
Tensor &pow_out(Tensor &out, const Scalar &self, const Tensor &exponent);

// Binary ops with a tensor or a scalar as the other operand.  add and sub
// compute self + alpha * other and self - alpha * other; div divides
// exactly (integers give Float); bitwise_and and bitwise_or need integer
// tensors, and cast a Scalar operand (first or second) to the tensor's dtype.
Tensor add(const Tensor &self, const Tensor &other, const Scalar &alpha = 1);
Tensor add(const Tensor &self, const Scalar &other, const Scalar &alpha = 1);
Tensor sub(const Tensor &self, const Tensor &other, const Scalar &alpha = 1);
Tensor sub(const Tensor &self, const Scalar &other, const Scalar &alpha = 1);
Tensor mul(const Tensor &self, const Tensor &other);
Tensor mul(const Tensor &self, const Scalar &other);
Tensor div(const Tensor &self, const Tensor &other);
Tensor div(const Tensor &self, const Scalar &other);
Tensor bitwise_and(const Tensor &self, const Tensor &other);
Tensor bitwise_and(const Tensor &self, const Scalar &other);
Tensor bitwise_or(const Tensor &self, const Tensor &other);
Tensor bitwise_or(const Tensor &self, const Scalar &other);
Tensor bitwise_and(const Scalar &self, const Tensor &other);
Tensor bitwise_or(const Scalar &self, const Tensor &other);
Tensor &add_out(Tensor &out, const Tensor &self, const Tensor &other, const Scalar &alpha = 1);
Tensor &add_out(Tensor &out, const Tensor &self, const Scalar &other, const Scalar &alpha = 1);
Tensor &sub_out(Tensor &out, const Tensor &self, const Tensor &other, const Scalar &alpha = 1);
Tensor &sub_out(Tensor &out, const Tensor &self, const Scalar &other, const Scalar &alpha = 1);
Tensor &mul_out(Tensor &out, const Tensor &self, const Tensor &other);
Tensor &mul_out(Tensor &out, const Tensor &self, const Scalar &other);
Tensor &div_out(Tensor &out, const Tensor &self, const Tensor &other);
Tensor &div_out(Tensor &out, const Tensor &self, const Scalar &other);
Tensor &bitwise_and_out(Tensor &out, const Tensor &self, const Tensor &other);
Tensor &bitwise_and_out(Tensor &out, const Tensor &self, const Scalar &other);
Tensor &bitwise_or_out(Tensor &out, const Tensor &self, const Tensor &other);
Tensor &bitwise_or_out(Tensor &out, const Tensor &self, const Scalar &other);
Tensor &bitwise_and_out(Tensor &out, const Scalar &self, const Tensor &other);
Tensor &bitwise_or_out(Tensor &out, const Scalar &self, const Tensor &other);

} // namespace at

#endif
