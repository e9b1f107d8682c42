/* tcm_poison.h - tells AddressSanitizer which bytes of the TCM pool a
 * kernel may touch: with ASan, everything of the pool outside the bytes
 * asked for of the live blocks is poisoned, so a stray access is reported
 * at the kernel's file and line; without ASan these do nothing. */
#ifndef CUSTOMOP_HOST_TCM_POISON_H
#define CUSTOMOP_HOST_TCM_POISON_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define CUSTOMOP_HOST_TCM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUSTOMOP_HOST_TCM_ASAN 1
#endif
#endif

#ifdef CUSTOMOP_HOST_TCM_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace neuron_host {

// Makes [address, address + size) a region ASan reports any access to.
inline void tcm_poison(const volatile void *address, size_t size)
{
#ifdef CUSTOMOP_HOST_TCM_ASAN
    ASAN_POISON_MEMORY_REGION(address, size);
#else
    (void)address;
    (void)size;
#endif
}

// Makes [address, address + size) accessible again.
inline void tcm_unpoison(const volatile void *address, size_t size)
{
#ifdef CUSTOMOP_HOST_TCM_ASAN
    ASAN_UNPOISON_MEMORY_REGION(address, size);
#else
    (void)address;
    (void)size;
#endif
}

} // namespace neuron_host

#endif
