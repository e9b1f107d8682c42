/* neuron/host/array_ref.h - IntArrayRef: a borrowed list of sizes or strides. */
#ifndef NEURON_HOST_ARRAY_REF_H
#define NEURON_HOST_ARRAY_REF_H

#include <stddef.h>
#include <stdint.h>
#include <initializer_list>
#include <vector>
#include "neuron/host/violation.h"

namespace c10 {

// Borrows its elements, as c10::IntArrayRef does: it must not outlive the
// list or tensor it was made from.
class IntArrayRef {
public:
    IntArrayRef() : data_(nullptr), size_(0) {}
    IntArrayRef(const int64_t &one) : data_(&one), size_(1) {}
    IntArrayRef(const int64_t *data, size_t size) : data_(data), size_(size) {}
    IntArrayRef(const std::vector<int64_t> &list) : data_(list.data()), size_(list.size()) {}
    // The list lives until the end of the full expression, which is all a
    // call such as torch::zeros({2, 3}) needs.
    IntArrayRef(const std::initializer_list<int64_t> &list)
        : data_(first_of(list)), size_(list.size()) {}

    const int64_t *data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const int64_t *begin() const { return data_; }
    const int64_t *end() const { return data_ + size_; }
    // Checked, as the accessors are (stricter than the device, which reads
    // past the list: x.sizes()[1] of a tensor of one dimension, say).
    int64_t operator[](size_t index) const
    {
        if (index >= size_)
            neuron_host::violation("IntArrayRef: index %zu is out of range for a list of %zu (sizes() and "
                                   "strides() have one element per dimension; on the device the read goes "
                                   "past the list)", index, size_);
        return data_[index];
    }
    int64_t front() const { return data_[0]; }
    int64_t back() const { return data_[size_ - 1]; }
    std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
    bool equals(IntArrayRef other) const
    {
        if (size_ != other.size_)
            return false;
        for (size_t i = 0; i < size_; i++)
            if (data_[i] != other.data_[i])
                return false;
        return true;
    }

private:
    static const int64_t *first_of(const std::initializer_list<int64_t> &list) { return list.begin(); }

    const int64_t *data_;
    size_t size_;
};

inline bool operator==(IntArrayRef a, IntArrayRef b) { return a.equals(b); }
inline bool operator!=(IntArrayRef a, IntArrayRef b) { return !a.equals(b); }

} // namespace c10

#endif
