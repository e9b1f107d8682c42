/* neuron/host/scalar.h - at::Scalar: one number, integral or floating. */
#ifndef NEURON_HOST_SCALAR_H
#define NEURON_HOST_SCALAR_H

#include <stdint.h>
#include <type_traits>

#include "neuron/host/scalar_type.h"

namespace c10 {

class Scalar {
public:
    Scalar() : floating_(false), double_(0), long_(0) {}
    template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
    Scalar(T value) : floating_(false), double_(0), long_(static_cast<int64_t>(value)) {}
    template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
    Scalar(T value) : floating_(true), double_(static_cast<double>(value)), long_(0) {}
    Scalar(Half value) : Scalar(static_cast<float>(value)) {}
    Scalar(BFloat16 value) : Scalar(static_cast<float>(value)) {}

    bool isFloatingPoint() const { return floating_; }
    bool isIntegral(bool include_bool = false) const { (void)include_bool; return !floating_; }

    // Converts as a C++ cast from the stored value would.
    template <typename T> T to() const
    {
        return floating_ ? static_cast<T>(double_) : static_cast<T>(long_);
    }
    double toDouble() const { return floating_ ? double_ : static_cast<double>(long_); }
    float toFloat() const { return static_cast<float>(toDouble()); }
    int toInt() const { return floating_ ? static_cast<int>(double_) : static_cast<int>(long_); }
    int64_t toLong() const { return floating_ ? static_cast<int64_t>(double_) : long_; }
    Half toHalf() const { return Half(toFloat()); }
    BFloat16 toBFloat16() const { return BFloat16(toFloat()); }

private:
    bool floating_;
    double double_;
    int64_t long_;
};

} // namespace c10

#endif
