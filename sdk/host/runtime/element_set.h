/* element_set.h - a set of element indices of one tensor, as the core
 * ledger records what a core wrote or read (not part of the SDK's API).
 *
 * Ranges while they are few, which is what block copies and sequential
 * loops make (a run of single elements written in order is one range); a
 * bitmap once the ranges would take more memory than it (scattered single
 * elements).  Its memory is kept from call to call. */
#ifndef CUSTOMOP_HOST_ELEMENT_SET_H
#define CUSTOMOP_HOST_ELEMENT_SET_H

#include <stddef.h>
#include <stdint.h>
#include <vector>

#include "neuron/host_abi.h"

namespace neuron_host {

class ElementSet {
public:
    explicit ElementSet(int64_t size = 0) { reset(size); }

    // Empties the set and makes it a set of indices in [0, size).
    void reset(int64_t size);
    // Adds [begin, end), clipped to [0, size).
    void add(int64_t begin, int64_t end);
    // Adds every index of other, a set of the same size.
    void add(const ElementSet &other);
    // Sorts and merges the ranges, so that the set can be read.
    void normalize();

    // After normalize(): the number of indices, and the set as the host ABI
    // describes one (valid until the set changes).
    int64_t count() const;
    customop_host_elements describe() const;

private:
    void make_bitmap();
    void set_bits(int64_t begin, int64_t end);
    size_t range_limit() const;

    std::vector<customop_host_range> ranges_;
    std::vector<uint64_t> bits_;
    int64_t size_ = 0;
    bool bitmap_ = false;
    bool sorted_ = true; // ranges_ is sorted, disjoint and not touching
};

} // namespace neuron_host

#endif
