/* access_checks.cpp - the host target's access checks: each load and store
 * of the kernel's code that lands in memory the runtime manages for it (the
 * TCM pool, the translation windows, the HBM addresses) is checked before it
 * is made, to the byte, and a wrong one stops the op there, naming the
 * block, window or tensor and the kernel's function.
 *
 * build-custom-op compiles host kernels with the compiler's kernel
 * AddressSanitizer instrumentation in its outline form (gcc and clang:
 * -fsanitize=kernel-address, every access a call, no stack or global
 * instrumentation, no runtime): each load and store of N bytes calls
 * __asan_loadN_noabort or __asan_storeN_noabort, defined here.  They cost
 * two compares for an address outside the managed ranges.  The compilers
 * leave calls of memcpy, memmove and memset alone in that form: the
 * runtime defines them too (hidden, so only for the core library's own
 * code), checks both ranges the same way and calls libc's.  A build with
 * --sanitize=address has AddressSanitizer itself instead (the pool is
 * poisoned for it, see tcm_poison.h), and the variant of the runtime built
 * for it leaves these out.  Page protection catches what code without the
 * checks does (libc's functions, another compiler): see tcm.cpp, hbm.cpp
 * and windows.cpp. */
#include <dlfcn.h>
#include <stdio.h>

#include "runtime.h"
#include "sanitizer.h"

namespace neuron_host {
namespace {

struct Range {
    uintptr_t begin;
    uintptr_t size;
};

Range managed[managed_range_count];
bool extra_ranges;
// The live TCM block the last checked access was in: the next access to it
// needs no look-up.
Range last_block;
// Above 0 while the runtime copies memory it manages itself (the windows'
// copies), which its own memcpy calls are not the kernel's accesses.
int runtime_copying;

#ifndef CUSTOMOP_HOST_ASAN
__attribute__((noinline)) void check_slow(uintptr_t address, size_t size, bool writes, const void *code)
{
    const char *at = reinterpret_cast<const char *>(address);
    if (address - managed[managed_tcm].begin < managed[managed_tcm].size)
        tcm_check_access(at, size, writes, code);
    else if (address - managed[managed_windows].begin < managed[managed_windows].size)
        windows_check_access(at, size, writes, code);
    else
        hbm_check_access(address, size, writes, code);
}

inline void check(const void *pointer, size_t size, bool writes, const void *code)
{
    uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    if (__builtin_expect(address - managed[0].begin < managed[0].size ||
                             address - managed[1].begin < managed[1].size ||
                             address - managed[2].begin < managed[2].size || extra_ranges,
                         0) &&
        !(address - last_block.begin < last_block.size && size <= last_block.size - (address - last_block.begin)))
        check_slow(address, size, writes, code);
}
#endif

} // namespace

void managed_range_set(int which, const void *begin, size_t size)
{
    managed[which] = Range{reinterpret_cast<uintptr_t>(begin), begin ? size : 0};
}

void managed_extra_ranges(bool any)
{
    extra_ranges = any;
}

void access_block_seen(const void *begin, size_t size)
{
    last_block = Range{reinterpret_cast<uintptr_t>(begin), size};
}

RuntimeCopy::RuntimeCopy()
{
    runtime_copying++;
}

RuntimeCopy::~RuntimeCopy()
{
    runtime_copying--;
}

void describe_access(bool writes, size_t size, const void *code, char *text, size_t text_size)
{
    char function[256];
    describe_code_address(code, function, sizeof function);
    // describe_code_address says " in NAME".
    const char *name = function[0] ? function + 4 : "the kernel";
    snprintf(text, text_size, "%s %s %zu byte%s", name, writes ? "wrote" : "read", size, size == 1 ? "" : "s");
}

} // namespace neuron_host

#ifndef CUSTOMOP_HOST_ASAN
#define ACCESS_CHECKS(size)                                                                                            \
    void __asan_load##size##_noabort(void *address)                                                                    \
    {                                                                                                                  \
        neuron_host::check(address, size, false, __builtin_return_address(0));                                        \
    }                                                                                                                  \
    void __asan_store##size##_noabort(void *address)                                                                   \
    {                                                                                                                  \
        neuron_host::check(address, size, true, __builtin_return_address(0));                                         \
    }

extern "C" {
ACCESS_CHECKS(1)
ACCESS_CHECKS(2)
ACCESS_CHECKS(4)
ACCESS_CHECKS(8)
ACCESS_CHECKS(16)

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name -fsanitize=address instrumentation calls
void __asan_loadN_noabort(void *address, size_t size)
{
    if (size)
        neuron_host::check(address, size, false, __builtin_return_address(0));
}

// NOLINTNEXTLINE(bugprone-reserved-identifier): the name -fsanitize=address instrumentation calls
void __asan_storeN_noabort(void *address, size_t size)
{
    if (size)
        neuron_host::check(address, size, true, __builtin_return_address(0));
}

// Called before a call that does not return (a throw, longjmp): nothing to
// unpoison, as nothing is poisoned.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name -fsanitize=address instrumentation calls
void __asan_handle_no_return()
{
}
}

namespace {

using copy_function = void *(*)(void *, const void *, size_t);
using set_function = void *(*)(void *, int, size_t);

// libc's function of that name (the next definition after this library's).
template <typename Function> Function next_definition(Function *kept, const char *name)
{
    if (!*kept)
        *kept = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
    return *kept;
}

copy_function libc_memcpy, libc_memmove;
set_function libc_memset;

// At load, under dlopen's lock: a kernel's first copy must not look them up,
// as dlsym takes the loader's lock, and a kernel stopped at a time limit
// inside it would hold that lock for ever (every later dlopen and dlsym of
// the process would wait).  A copy made before this runs (another static
// constructor's) looks its function up then.
__attribute__((constructor)) void find_libc_copies()
{
    next_definition(&libc_memcpy, "memcpy");
    next_definition(&libc_memmove, "memmove");
    next_definition(&libc_memset, "memset");
}

void check_copy(void *to, const void *from, size_t size, const void *code)
{
    if (size && !neuron_host::runtime_copying) {
        neuron_host::check(from, size, false, code);
        neuron_host::check(to, size, true, code);
    }
}

} // namespace

extern "C" {

void *memcpy(void *to, const void *from, size_t size)
{
    check_copy(to, from, size, __builtin_return_address(0));
    return next_definition(&libc_memcpy, "memcpy")(to, from, size);
}

void *memmove(void *to, const void *from, size_t size)
{
    check_copy(to, from, size, __builtin_return_address(0));
    return next_definition(&libc_memmove, "memmove")(to, from, size);
}

void *memset(void *to, int value, size_t size)
{
    if (size && !neuron_host::runtime_copying)
        neuron_host::check(to, size, true, __builtin_return_address(0));
    return next_definition(&libc_memset, "memset")(to, value, size);
}
}
#endif
