/* neuron/host/accessors.h - the three ways a kernel reaches tensor data, by
 * the device's type names: TensorAccessor<T, N, read_only> from
 * accessor<T,N>() (element access through HBM), TensorReadStreamAccessor<T>
 * and TensorWriteStreamAccessor<T> (sequential, through a 4 KiB TCM buffer)
 * and TensorTcmAccessor<read_only> from tcm_accessor() (block copies
 * between a tensor and tcm_malloc'd memory). */
#ifndef NEURON_HOST_ACCESSORS_H
#define NEURON_HOST_ACCESSORS_H

#include <stddef.h>
#include <stdint.h>
#include <memory>
#include <type_traits>

#include "neuron/host/ledger.h"
#include "neuron/host/scalar_type.h"
#include "neuron/host/tensor_impl.h"
#include "neuron/host/violation.h"

namespace neuron_host {

// How many stream accessors are open on this core: while there are none,
// an element access needs no coherence check.
extern int open_stream_count;

// Checks an element access (through an accessor of element type and dims)
// against the streams open on the element's memory, under the accessing
// tensor's coherence policy.
__attribute__((cold)) void element_access_check(const TensorImpl &tensor, const void *element, bool writes,
                                               c10::ScalarType type, size_t dims);

// What the read and write stream accessors share; the work is in the runtime.
class StreamAccessorBase {
public:
    StreamAccessorBase(const StreamAccessorBase &) = delete;
    StreamAccessorBase &operator=(const StreamAccessorBase &) = delete;
    StreamAccessorBase &operator=(StreamAccessorBase &&) = delete;

protected:
    // Opens the stream: checks the multicore rule and coherence, and takes
    // a 4 KiB buffer from the core's TCM pool when it can give one.
    StreamAccessorBase(std::shared_ptr<const TensorImpl> tensor, bool writes, c10::ScalarType type);
    StreamAccessorBase(StreamAccessorBase &&other);
    ~StreamAccessorBase();
    // The address of the next element; a violation after close() or past
    // the end of the tensor (streams ignore strides, as on the device).
    void *next(const char *operation)
    {
        if (next_ == end_)
            stop(operation);
        void *element = next_;
        next_ += element_size_;
        return element;
    }
    // Ends the stream (a write stream flushes) and gives its buffer back.
    int close_stream();

private:
    // Why next() cannot go on: closed, moved from, or at the end.
    [[noreturn]] void stop(const char *operation) const;

    std::shared_ptr<const TensorImpl> tensor_;
    char *next_;          // the next element; end_ once closed or moved from
    char *end_;           // after the last whole element of the stream's type
    size_t element_size_;
    c10::ScalarType type_;
    bool writes_;
    int state_;           // open, closed or moved from
    int slot_;            // in the core's table of open streams
    uint32_t serial_;     // which opening of that slot this is
};

// The dtype number of element type T when T is one of the device's eight
// types, else -1 (a TCM copy may move the bytes of any type).
template <typename T, typename = void> struct ElementDtype {
    static constexpr int value = -1;
};
template <typename T> struct ElementDtype<T, decltype(void(c10::CppTypeToScalarType<T>::value))> {
    static constexpr int value = static_cast<int>(c10::CppTypeToScalarType<T>::value);
};

// Copies count elements of element_size bytes between the tensor's storage
// (from element offset, strides ignored) and TCM; a violation when the range
// leaves the tensor, a warning when element_dtype (ElementDtype) is a
// dtype other than the tensor's.
void tcm_copy(const TensorImpl &tensor, void *tcm, size_t offset, size_t count, size_t element_size,
              int element_dtype, bool to_tcm);

} // namespace neuron_host

namespace at {

// The state shared by every level of a TensorAccessor: each index is
// checked against its dimension, so an off-by-one is a reported violation
// rather than a stray write.
template <typename T, bool read_only> class TensorAccessorBase {
public:
    using Pointer = typename std::conditional<read_only, const T *, T *>::type;

    TensorAccessorBase(Pointer data, const int64_t *sizes, const int64_t *strides, int64_t first_dim,
                       const neuron_host::TensorImpl *tensor)
        : data_(data), sizes_(sizes), strides_(strides), first_dim_(first_dim), tensor_(tensor) {}
    int64_t size(size_t dim) const { return sizes_[dim]; }
    int64_t stride(size_t dim) const { return strides_[dim]; }

protected:
    void check(int64_t index) const
    {
        if (index < 0 || index >= sizes_[0])
            neuron_host::violation("accessor: index %lld is out of range for dimension %lld of size %lld",
                                   static_cast<long long>(index), static_cast<long long>(first_dim_),
                                   static_cast<long long>(sizes_[0]));
    }

    Pointer data_;
    const int64_t *sizes_;
    const int64_t *strides_;
    int64_t first_dim_;
    const neuron_host::TensorImpl *tensor_;
};

// N dimensions left to index.  The accessor of a const tensor is read-only
// (read_only = true): writing through it does not compile, as on the device.
template <typename T, size_t N, bool read_only = false>
class TensorAccessor : public TensorAccessorBase<T, read_only> {
public:
    using TensorAccessorBase<T, read_only>::TensorAccessorBase;

    TensorAccessor<T, N - 1, read_only> operator[](int64_t index) const
    {
        this->check(index);
        return TensorAccessor<T, N - 1, read_only>(this->data_ + index * this->strides_[0], this->sizes_ + 1,
                                                   this->strides_ + 1, this->first_dim_ + 1, this->tensor_);
    }
};

template <typename T, bool read_only> class TensorAccessor<T, 1, read_only> : public TensorAccessorBase<T, read_only> {
public:
    using TensorAccessorBase<T, read_only>::TensorAccessorBase;
    using Reference = typename std::conditional<read_only, const T &, T &>::type;

    Reference operator[](int64_t index) const
    {
        this->check(index);
        typename TensorAccessorBase<T, read_only>::Pointer element = this->data_ + index * this->strides_[0];
        if (read_only)
            neuron_host::element_reads_counted++;
        else
            neuron_host::element_writes_counted++;
        if (__builtin_expect(neuron_host::open_stream_count != 0, 0))
            neuron_host::element_access_check(*this->tensor_, element, !read_only, c10::CppTypeToScalarType<T>::value,
                                              static_cast<size_t>(this->first_dim_) + 1);
        if (!read_only && __builtin_expect(this->tensor_->tracks_writes, 0)) {
            const char *at = reinterpret_cast<const char *>(element);
            neuron_host::PendingWrites &pending = neuron_host::pending_writes;
            if (pending.tensor == this->tensor_ && at == pending.end)
                pending.end = at + sizeof(T);
            else if (pending.tensor != this->tensor_ || at + sizeof(T) != pending.end)
                neuron_host::record_element_write(*this->tensor_, element, sizeof(T));
        }
        return *element;
    }
};

// Reads the tensor's elements in storage order, one at a time.  Open from
// read_stream_accessor<T>() to close() or destruction; while open it holds
// 4 KiB of the core's TCM pool, when the pool can give them.
template <typename T> class TensorReadStreamAccessor : private neuron_host::StreamAccessorBase {
public:
    explicit TensorReadStreamAccessor(std::shared_ptr<const neuron_host::TensorImpl> tensor)
        : StreamAccessorBase(std::move(tensor), false, c10::CppTypeToScalarType<T>::value) {}
    TensorReadStreamAccessor(TensorReadStreamAccessor &&) = default;

    T read() { return *static_cast<const T *>(next("read()")); }
    // Ends the stream; using it afterwards is a violation.  Returns 0.
    int close() { return close_stream(); }
};

// Writes the tensor's elements in storage order, one at a time.  Only a
// non-const tensor has one.  close() flushes it.
template <typename T> class TensorWriteStreamAccessor : private neuron_host::StreamAccessorBase {
public:
    explicit TensorWriteStreamAccessor(std::shared_ptr<const neuron_host::TensorImpl> tensor)
        : StreamAccessorBase(std::move(tensor), true, c10::CppTypeToScalarType<T>::value) {}
    TensorWriteStreamAccessor(TensorWriteStreamAccessor &&) = default;

    void write(T value) { *static_cast<T *>(next("write()")) = value; }
    // Flushes and ends the stream; using it afterwards is a violation.
    // Returns 0.
    int close() { return close_stream(); }
};

// Block copies between a tensor and TCM; offset and n count elements of T.
// The accessor of a const tensor (read_only = true) cannot write to it.
// TCM accessors do no coherence checks, as on the device.
template <bool read_only> class TensorTcmAccessor {
public:
    explicit TensorTcmAccessor(std::shared_ptr<const neuron_host::TensorImpl> tensor) : tensor_(std::move(tensor)) {}

    template <typename T> void tensor_to_tcm(T *tcm, size_t offset, size_t n) const
    {
        neuron_host::tcm_copy(*tensor_, tcm, offset, n, sizeof(T), neuron_host::ElementDtype<T>::value, true);
    }
    template <typename T> void tcm_to_tensor(const T *tcm, size_t offset, size_t n) const
    {
        static_assert(!read_only && sizeof(T) > 0, "Can only write to non-const Tensors");
        neuron_host::tcm_copy(*tensor_, const_cast<T *>(tcm), offset, n, sizeof(T), neuron_host::ElementDtype<T>::value,
                              false);
    }

private:
    std::shared_ptr<const neuron_host::TensorImpl> tensor_;
};

} // namespace at

#endif
