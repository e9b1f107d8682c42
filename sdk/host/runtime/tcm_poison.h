/* tcm_poison.h - the TCM pool as AddressSanitizer sees it, in the variant of
 * the host SDK built with it: the whole pool is poisoned, and only the bytes
 * a live block asked for are not, so a kernel's access past a block, before
 * it or anywhere else in the pool is reported at the kernel's file:line.
 * Without ASan these do nothing. */
#ifndef CUSTOMOP_HOST_TCM_POISON_H
#define CUSTOMOP_HOST_TCM_POISON_H

#include <stddef.h>

#include "sanitizer.h"

#ifdef CUSTOMOP_HOST_ASAN
// The runtime's own reads of poisoned TCM (its guard checks).
#define TCM_READS_POISON __attribute__((no_sanitize_address))
inline void tcm_poison(const void *start, size_t length) { ASAN_POISON_MEMORY_REGION(start, length); }
inline void tcm_unpoison(const void *start, size_t length) { ASAN_UNPOISON_MEMORY_REGION(start, length); }
#else
#define TCM_READS_POISON
inline void tcm_poison(const void *, size_t) {}
inline void tcm_unpoison(const void *, size_t) {}
#endif

#endif
