/* neuron/host/tensor.h - at::Tensor: metadata, accessors, no raw pointers. */
#ifndef NEURON_HOST_TENSOR_H
#define NEURON_HOST_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <memory>
#include <utility>

#include "neuron/host/accessors.h"
#include "neuron/host/array_ref.h"
#include "neuron/host/coherence.h"
#include "neuron/host/q7_ptr.h"
#include "neuron/host/scalar.h"
#include "neuron/host/scalar_type.h"
#include "neuron/host/tensor_impl.h"
#include "neuron/host/tensor_options.h"
#include "neuron/host/violation.h"

namespace neuron_host {
struct TensorInternals;
}

namespace at {

using c10::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;

// A handle: copies share the same elements, as in PyTorch.
class Tensor {
public:
    Tensor() = default;

    bool defined() const { return impl_ != nullptr; }
    IntArrayRef sizes() const { return IntArrayRef(impl().sizes); }
    IntArrayRef strides() const { return IntArrayRef(impl().strides); }
    int64_t size(int64_t dim) const { return impl().sizes[wrap_dim(dim)]; }
    int64_t stride(int64_t dim) const { return impl().strides[wrap_dim(dim)]; }
    int64_t numel() const { return impl().numel; }
    int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
    ScalarType scalar_type() const { return impl().dtype; }
    // PyTorch returns a TypeMeta that compares with a ScalarType; the
    // ScalarType itself serves every use a kernel has for it.
    ScalarType dtype() const { return impl().dtype; }
    size_t element_size() const { return c10::elementSize(impl().dtype); }
    size_t itemsize() const { return element_size(); }
    TensorOptions options() const { return TensorOptions(impl().dtype); }
    bool is_contiguous() const;

    // Element access.  A const tensor gives the read-only accessor, so
    // writing through it does not compile, as on the device.  The accessor
    // would outlive a temporary tensor's sizes, so temporaries have none.
    template <typename T, size_t N> TensorAccessor<T, N, false> accessor() &
    {
        static_assert(N > 0, "accessor<T,N>() needs N >= 1");
        check_accessor(c10::CppTypeToScalarType<T>::value, N);
        return TensorAccessor<T, N, false>(static_cast<T *>(impl().data), impl().sizes.data(), impl().strides.data(),
                                           0, &impl());
    }
    template <typename T, size_t N> TensorAccessor<T, N, true> accessor() const &
    {
        static_assert(N > 0, "accessor<T,N>() needs N >= 1");
        check_accessor(c10::CppTypeToScalarType<T>::value, N);
        return TensorAccessor<T, N, true>(static_cast<const T *>(impl().data), impl().sizes.data(),
                                          impl().strides.data(), 0, &impl());
    }
    template <typename T, size_t N> TensorAccessor<T, N, false> accessor() && = delete;
    template <typename T, size_t N> TensorAccessor<T, N, true> accessor() const && = delete;

    // Sequential access through a TCM buffer.  Only a non-const tensor can
    // be written, as on the device.
    template <typename T> TensorReadStreamAccessor<T> read_stream_accessor() const &
    {
        return TensorReadStreamAccessor<T>(shared_impl());
    }
    template <typename T> TensorWriteStreamAccessor<T> write_stream_accessor() &
    {
        return TensorWriteStreamAccessor<T>(shared_impl());
    }
    template <typename T> TensorWriteStreamAccessor<T> write_stream_accessor() const &
    {
        static_assert(sizeof(T) == 0, "Can only write to non-const Tensors: write_stream_accessor<T>() needs a "
                                      "non-const tensor");
        return TensorWriteStreamAccessor<T>(shared_impl());
    }
    template <typename T> TensorWriteStreamAccessor<T> write_stream_accessor() && = delete;

    // Block copies between the tensor and TCM; read-only for a const tensor.
    TensorTcmAccessor<false> tcm_accessor() { return TensorTcmAccessor<false>(shared_impl()); }
    TensorTcmAccessor<true> tcm_accessor() const { return TensorTcmAccessor<true>(shared_impl()); }

    // Fills every element with value, converted to the tensor's dtype, and
    // returns this tensor, as PyTorch declares it (a const tensor shares its
    // elements, which fill_ changes).
    Tensor &fill_(const Scalar &value) const;

    // The policy for accessors of this tensor (and of its copies) that may
    // see each other's data stale; COHERENT unless set.
    torch::CoherencyEnforcer::Policy get_accessor_coherence_policy() const { return impl().coherence_policy; }
    void set_accessor_coherence_policy(torch::CoherencyEnforcer::Policy policy) const
    {
        const_cast<neuron_host::TensorImpl &>(impl()).coherence_policy = policy;
    }

    // The tensor's HBM address, the core's translation context and whether
    // the tensor has no data (see custom_op.h): the address is not a
    // pointer; operator[] of the result maps and reaches an element.
    c10::Q7PtrType q7_data_ptr() const;

    template <typename T = void> T *data_ptr() const
    {
        static_assert(sizeof(T *) == 0,
                      "data_ptr() is not available on the device (it throws there): reach tensor data "
                      "through accessor<T,N>(), read_stream_accessor<T>(), write_stream_accessor<T>(), "
                      "tcm_accessor(), or q7_data_ptr() with custom_op.h");
        return nullptr;
    }
    template <typename T = void> void storage() const
    {
        static_assert(sizeof(T *) == 0,
                      "storage() is not available on the device (it throws there): reach tensor data "
                      "through the accessors");
    }

private:
    friend struct neuron_host::TensorInternals;

    const neuron_host::TensorImpl &impl() const
    {
        if (!impl_)
            neuron_host::violation("use of an undefined tensor");
        return *impl_;
    }
    std::shared_ptr<const neuron_host::TensorImpl> shared_impl() const
    {
        impl();
        return impl_;
    }
    size_t wrap_dim(int64_t dim) const;
    void check_accessor(ScalarType element_type, size_t dims) const;

    std::shared_ptr<neuron_host::TensorImpl> impl_;
};

} // namespace at

namespace neuron_host {

// The runtime's way in: a kernel has no data pointer, but the marshalling,
// the factories and the element-wise ops need one.
struct TensorInternals {
    static at::Tensor wrap(std::shared_ptr<TensorImpl> impl)
    {
        at::Tensor tensor;
        tensor.impl_ = std::move(impl);
        return tensor;
    }
    static TensorImpl &impl(const at::Tensor &tensor) { return const_cast<TensorImpl &>(tensor.impl()); }
    static std::shared_ptr<const TensorImpl> shared(const at::Tensor &tensor) { return tensor.shared_impl(); }
};

} // namespace neuron_host

#endif
