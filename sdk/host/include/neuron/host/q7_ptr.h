/* neuron/host/q7_ptr.h - c10::Q7PtrType, what Tensor::q7_data_ptr() returns:
 * a tensor's HBM address, the core's translation context and a null flag.
 * The layout is the device's {uint64_t hbm_addr; void *ctx_ptr; bool
 * is_nullptr;} (16 bytes there, 24 on a 64-bit host).  An HBM address is
 * not a pointer: operator[] maps the element it names (as neuron_translate
 * does) and reaches it through the mapping; operator+ only moves the
 * address.  See custom_op.h. */
#ifndef NEURON_HOST_Q7_PTR_H
#define NEURON_HOST_Q7_PTR_H

#include <stddef.h>
#include <stdint.h>

namespace neuron_host {

// hbm.cpp: the element of size bytes at hbm_addr + size * index, checked
// against the tensor or HBM allocation the address lies in and recorded in
// the core ledger as a use of a writable element accessor.  Like a call of
// neuron_translate, it takes a translation window: a pointer neuron_translate
// returned 4 mappings earlier is then stale.
void *q7_element(uint64_t hbm_addr, const void *ctx_ptr, bool is_nullptr, int64_t index, size_t size);

} // namespace neuron_host

namespace c10 {

struct Q7PtrType {
    uint64_t hbm_addr;
    void *ctx_ptr;
    bool is_nullptr;

    // p.operator[]<float>(i): element i, counted in Ts from hbm_addr.
    template <typename T> T &operator[](int64_t index) const
    {
        return *static_cast<T *>(neuron_host::q7_element(hbm_addr, ctx_ptr, is_nullptr, index, sizeof(T)));
    }
    // p.operator+<float>(n): the address n Ts further on; nothing is checked
    // or mapped.
    template <typename T> Q7PtrType operator+(int64_t count) const
    {
        return Q7PtrType{hbm_addr + static_cast<uint64_t>(count) * sizeof(T), ctx_ptr, is_nullptr};
    }
};

} // namespace c10

#endif
