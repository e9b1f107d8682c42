/* neuron/host/accessors.h - the three ways a kernel reaches tensor data:
 * accessor<T,N>() (element access through HBM), the read/write stream
 * accessors (sequential, through a 4 KiB TCM buffer) and tcm_accessor()
 * (block copies between a tensor and tcm_malloc'd memory). */
#ifndef NEURON_HOST_ACCESSORS_H
#define NEURON_HOST_ACCESSORS_H

#include <stddef.h>
#include <stdint.h>

#include "neuron/host/scalar_type.h"
#include "neuron/host/tensor_impl.h"
#include "neuron/host/violation.h"

namespace neuron_host {

// Takes a stream accessor's 4 KiB buffer from the core's TCM pool; a
// violation when the pool cannot give it.
void *stream_buffer_take(const char *accessor);
// Gives a stream buffer back to the pool.
void stream_buffer_give_back(void *buffer);
// Copies count elements of element_size bytes between the tensor's storage
// (from element offset, strides ignored) and TCM; a violation when the range
// leaves the tensor or tcm is not inside the TCM pool.
void tcm_copy(const TensorImpl &tensor, void *tcm, size_t offset, size_t count,
              size_t element_size, bool to_tcm);

} // namespace neuron_host

namespace at {

// The state shared by every level of a TensorAccessor: each index is
// checked against its dimension, so an off-by-one is a reported violation
// rather than a stray write.
template <typename T> class TensorAccessorBase {
public:
    TensorAccessorBase(T *data, const int64_t *sizes, const int64_t *strides, int64_t first_dim)
        : data_(data), sizes_(sizes), strides_(strides), first_dim_(first_dim) {}
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

    T *data_;
    const int64_t *sizes_;
    const int64_t *strides_;
    int64_t first_dim_;
};

// N dimensions left to index.
template <typename T, size_t N> class TensorAccessor : public TensorAccessorBase<T> {
public:
    using TensorAccessorBase<T>::TensorAccessorBase;

    TensorAccessor<T, N - 1> operator[](int64_t index) const
    {
        this->check(index);
        return TensorAccessor<T, N - 1>(this->data_ + index * this->strides_[0], this->sizes_ + 1,
                                        this->strides_ + 1, this->first_dim_ + 1);
    }
};

template <typename T> class TensorAccessor<T, 1> : public TensorAccessorBase<T> {
public:
    using TensorAccessorBase<T>::TensorAccessorBase;

    T &operator[](int64_t index) const
    {
        this->check(index);
        return this->data_[index * this->strides_[0]];
    }
};

// Reads or writes the tensor's elements in storage order, one at a time.
// Holds its 4 KiB of TCM from construction to destruction, as the device's
// does, so too many live stream accessors exhaust the pool.
template <typename T, bool Writes> class StreamAccessor {
public:
    explicit StreamAccessor(const neuron_host::TensorImpl &tensor)
        : data_(static_cast<T *>(tensor.data)),
          count_(tensor.byte_size() / sizeof(T)),
          position_(0),
          buffer_(neuron_host::stream_buffer_take(Writes ? "write_stream_accessor" : "read_stream_accessor")) {}
    StreamAccessor(StreamAccessor &&other)
        : data_(other.data_), count_(other.count_), position_(other.position_), buffer_(other.buffer_)
    {
        other.buffer_ = nullptr;
    }
    StreamAccessor(const StreamAccessor &) = delete;
    StreamAccessor &operator=(const StreamAccessor &) = delete;
    ~StreamAccessor()
    {
        if (buffer_)
            neuron_host::stream_buffer_give_back(buffer_);
    }

    T read()
    {
        static_assert(!Writes, "read() needs a read_stream_accessor");
        check_next("read_stream_accessor: read");
        return data_[position_++];
    }
    void write(const T &value)
    {
        static_assert(Writes, "write() needs a write_stream_accessor");
        check_next("write_stream_accessor: write");
        data_[position_++] = value;
    }

private:
    void check_next(const char *what) const
    {
        if (position_ >= count_)
            neuron_host::violation("%s past the end of the tensor (%zu elements)", what, count_);
    }

    T *data_;
    size_t count_;
    size_t position_;
    void *buffer_;
};

template <typename T> using ReadStreamAccessor = StreamAccessor<T, false>;
template <typename T> using WriteStreamAccessor = StreamAccessor<T, true>;

// Block copies between a tensor and TCM; offset and n count elements of T.
// The accessor of a const tensor cannot write to it, as on the device.
template <bool Writable> class TCMAccessor {
public:
    explicit TCMAccessor(const neuron_host::TensorImpl &tensor) : tensor_(&tensor) {}

    template <typename T> void tensor_to_tcm(T *tcm, size_t offset, size_t n) const
    {
        neuron_host::tcm_copy(*tensor_, tcm, offset, n, sizeof(T), true);
    }
    template <typename T> void tcm_to_tensor(const T *tcm, size_t offset, size_t n) const
    {
        static_assert(Writable && sizeof(T) > 0, "Can only write to non-const Tensors");
        neuron_host::tcm_copy(*tensor_, const_cast<T *>(tcm), offset, n, sizeof(T), false);
    }

private:
    const neuron_host::TensorImpl *tensor_;
};

} // namespace at

#endif
