/* hbm.h - HBM addresses on the host: what windows.cpp needs of hbm.cpp (not
 * part of the SDK's API). */
#ifndef CUSTOMOP_HOST_HBM_H
#define CUSTOMOP_HOST_HBM_H

#include <stddef.h>
#include <stdint.h>
#include <memory>
#include <string>

#include "neuron/host/tensor_impl.h"

namespace neuron_host {

// A tensor whose HBM address the kernel asked for (q7_data_ptr), or an HBM
// allocation: its address, which no access may touch, and its bytes.
struct HbmObject {
    uint64_t address;
    char *memory;
    size_t bytes;
    // The tensor (kept until the op ends), or NULL for an allocation.
    std::shared_ptr<const TensorImpl> tensor;
    const void *caller; // an allocation: neuron_hbm_allocate's caller
    bool freed;         // an allocation given back
};

// The object address lies in (its end address counts when end_counts), or
// NULL.
const HbmObject *hbm_find(uint64_t address, bool end_counts);
// "argument 1 (Tensor x)", "the 4096-byte HBM allocation made by
// neuron_hbm_allocate in f()".
std::string hbm_describe_object(const HbmObject &object);
// "byte 16 of argument 1 (Tensor x)", "byte 4000 of argument 1 (Tensor x),
// past its end (it holds 4000 bytes)", "byte -4 of ..., before its start",
// or "an address of no tensor or HBM allocation".
std::string hbm_describe_position(uint64_t address);
// The offset of address from object's first byte, as text ("-4").
std::string hbm_offset_text(const HbmObject &object, uint64_t address);

} // namespace neuron_host

#endif
