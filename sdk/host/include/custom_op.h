/* custom_op.h - the device runtime API a kernel may call besides the tensor
 * accessors: HBM addresses and their translation into local pointers, HBM
 * and data RAM (TCM) allocations, and copies between HBM and data RAM.
 *
 * The signatures are the device library's, as public static analysis of
 * the shipped library gives them (Neuron's documentation does not describe
 * this API).  On the device the core is 32-bit and an HBM address is a
 * 64-bit SoC address, not a pointer; on the host too an HBM address is no
 * pointer: reading or writing through one stops the op.  What the emulator
 * does with each call: docs/reference/custom_op_h.md and run-custom-op(1),
 * "THE DEVICE RUNTIME API". */
#ifndef CUSTOM_OP_H
#define CUSTOM_OP_H

#include <stddef.h>
#include <stdint.h>

#include "neuron/host/q7_ptr.h"

namespace neuron_host {

// windows.cpp: neuron_translate for a caller whose memory accesses the
// runtime checks (checked: compiled with the host target's access checks)
// or does not (an AddressSanitizer build, a compiler without them).
void *translate(void *ctx, uint64_t hbm_addr, bool checked);

} // namespace neuron_host

// The core's translation context, for neuron_translate (and the ctx_ptr of
// a Q7PtrType).
void *neuron_translate_ctx();

// Whether this translation unit's loads and stores go through the host
// target's access checks (an AddressSanitizer build sets the same macros;
// the runtime built for it knows to ignore them).
#if defined(__SANITIZE_ADDRESS__)
#define NEURON_HOST_ACCESSES_CHECKED true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NEURON_HOST_ACCESSES_CHECKED true
#endif
#endif
#ifndef NEURON_HOST_ACCESSES_CHECKED
#define NEURON_HOST_ACCESSES_CHECKED false
#endif

// A local pointer to HBM address hbm_addr, through one of the core's
// translation windows.  It is valid until the window is remapped: the
// device library's rule is "until the next neuron_translate call"; the
// emulator remaps its 4 windows round-robin (each Q7PtrType::operator[]
// takes one too), and a pointer kept past that stops the op.
inline void *neuron_translate(void *ctx, uint64_t hbm_addr)
{
    return neuron_host::translate(ctx, hbm_addr, NEURON_HOST_ACCESSES_CHECKED);
}

// size bytes of HBM, aligned to align (a power of two), from the op's HBM
// scratch: 0 and the address in *out, or -1 when the scratch cannot give
// them (never stops the op).
int neuron_hbm_allocate(unsigned size, uint64_t *out, unsigned align = 64);
// Gives back an allocation neuron_hbm_allocate made.
void neuron_hbm_deallocate(uint64_t hbm_addr);
// 0 and the allocation's size in *size when hbm_addr is the start of a live
// allocation, else -1.
int neuron_hbm_get_alloc_size(uint64_t hbm_addr, unsigned *size);

// size bytes of the core's data RAM (the 16 KiB pool tcm_malloc uses, in
// 64-byte granules), aligned to align: 0 and the local pointer in *out, or
// -1 (and NULL in *out) when the pool cannot give them.
int neuron_dataram_allocate(unsigned size, void **out, unsigned align);
// Gives back a data RAM block (NULL does nothing).
void neuron_dataram_deallocate(void *local);
// The largest block neuron_dataram_allocate could give now with that
// alignment, in *bytes; returns 0.
int neuron_dataram_max_free_space(unsigned *bytes, unsigned align);

// Copies bytes from HBM to data RAM, and from data RAM to HBM.  The HBM
// range must lie inside one tensor or allocation, the local one inside one
// data RAM block.
void neuron_memcpy(void *dst_local, uint64_t src_hbm, uint32_t bytes);
void neuron_memcpy(uint64_t dst_hbm, void *src_local, uint32_t bytes);

#endif
