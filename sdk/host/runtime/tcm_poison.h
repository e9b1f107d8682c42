/* tcm_poison.h - the TCM pool as AddressSanitizer sees it, in the variant of
 * the host SDK built with it: the whole pool is poisoned, and only the bytes
 * a live block asked for are not, so a kernel's access past a block, before
 * it or anywhere else in the pool is reported at the kernel's file:line.
 * Without ASan these do nothing. */
#ifndef CUSTOMOP_HOST_TCM_POISON_H
#define CUSTOMOP_HOST_TCM_POISON_H

#include <stddef.h>

#include "sanitizer.h"

namespace neuron_host {

// Makes [address, address + size) a region ASan reports any access to.
inline void tcm_poison(const volatile void *address, size_t size)
{
#ifdef CUSTOMOP_HOST_ASAN
    ASAN_POISON_MEMORY_REGION(address, size);
#else
    (void)address;
    (void)size;
#endif
}

// Makes [address, address + size) accessible again.
inline void tcm_unpoison(const volatile void *address, size_t size)
{
#ifdef CUSTOMOP_HOST_ASAN
    ASAN_UNPOISON_MEMORY_REGION(address, size);
#else
    (void)address;
    (void)size;
#endif
}

} // namespace neuron_host

#endif
