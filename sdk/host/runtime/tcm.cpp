/* tcm.cpp - the core's 16 KiB TCM (data RAM) pool: tcm_malloc and tcm_free,
 * the stream accessors' buffers, and tcm_accessor's copies.
 *
 * The pool is counted in 64-byte blocks, as the device's is, so the same
 * requests succeed and fail.  In memory, though, every block is followed by
 * a guard region of its own size: block i lives at arena + 2 * 64 * i, so
 * an allocation of k blocks has k * 64 bytes after it that no other
 * allocation uses.  The guard (and the slack between the bytes asked for and
 * the end of the last block) holds a pattern that is checked when the block
 * is given back and at the end of each op: on the device, writing there
 * would corrupt the next block or a stream accessor's buffer. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "neuron/host/accessors.h"
#include "neuron/host/violation.h"
#include "elements.h"
#include "runtime.h"
#include "tcm_poison.h"
#include "torch/torch.h"

namespace neuron_host {
namespace {

const size_t pool_size = 16 * 1024;
const size_t block_size = 64;
const size_t block_count = pool_size / block_size;
const size_t block_stride = 2 * block_size; // the block and its guard
const unsigned char guard_byte = 0xfd;

struct Pool {
    alignas(block_size) unsigned char arena[block_count * block_stride];
    // For the first block of each allocation: its length in blocks (0 for
    // free blocks and the rest of an allocation), the bytes asked for, and
    // who asked ("tcm_malloc", or a stream accessor for its buffer).
    uint16_t length[block_count];
    size_t requested[block_count];
    const char *owner[block_count];
    bool used[block_count];
    // A block that was the start of an allocation since freed, and not
    // reused: freeing it again is a double free.
    bool freed[block_count];
    // The run that made the allocation, so a violation can give back what
    // the abandoned kernel still held.
    uint32_t run[block_count];
    uint32_t current_run;
    // From tcm_begin_run to tcm_end_run or tcm_release_run: still set at the
    // next run when a fault abandoned the last one.
    bool run_in_progress;
};

Pool pool;

#ifdef CUSTOMOP_HOST_ASAN
// No byte of the pool is addressable until a block is allocated.
__attribute__((constructor)) void poison_pool() { tcm_poison(pool.arena, sizeof pool.arena); }
#endif

unsigned char *memory_of(size_t start)
{
    return pool.arena + start * block_stride;
}

// Where the guard of the allocation at start was first overwritten, as an
// offset from the end of the bytes asked for; -1 when it is intact.
TCM_READS_POISON long damaged_guard(size_t start)
{
    const unsigned char *memory = memory_of(start);
    size_t end = pool.length[start] * block_stride;
    for (size_t i = pool.requested[start]; i < end; i++)
        if (memory[i] != guard_byte)
            return static_cast<long>(i - pool.requested[start]);
    return -1;
}

void check_guard(size_t start, const char *found_at)
{
    if (damaged_guard(start) >= 0)
        violation("wrote past the end of a %zu-byte TCM block allocated by %s (found at %s; on the device this "
                  "overwrites the next block or a stream accessor's buffer)",
                  pool.requested[start], pool.owner[start], found_at);
}

void *allocate(size_t bytes, const char *owner)
{
    if (bytes > pool_size)
        return nullptr;
    size_t blocks = bytes == 0 ? 1 : (bytes + block_size - 1) / block_size;
    for (size_t start = 0; start + blocks <= block_count; start++) {
        size_t free_run = 0;
        while (free_run < blocks && !pool.used[start + free_run])
            free_run++;
        if (free_run < blocks) {
            start += free_run;
            continue;
        }
        for (size_t i = 0; i < blocks; i++) {
            pool.used[start + i] = true;
            pool.freed[start + i] = false;
        }
        pool.length[start] = static_cast<uint16_t>(blocks);
        pool.requested[start] = bytes;
        pool.owner[start] = owner;
        pool.run[start] = pool.current_run;
        unsigned char *memory = memory_of(start);
        tcm_unpoison(memory, blocks * block_stride);
        memset(memory + bytes, guard_byte, blocks * block_stride - bytes);
        tcm_poison(memory + bytes, blocks * block_stride - bytes);
        return memory;
    }
    return nullptr;
}

void release(size_t start)
{
    tcm_poison(memory_of(start), pool.length[start] * block_stride);
    for (size_t i = 0; i < pool.length[start]; i++)
        pool.used[start + i] = false;
    pool.length[start] = 0;
    pool.freed[start] = true;
}

// What a pointer given back to the pool is.
enum class Lookup { block, outside_pool, freed, inside_block, not_a_block };
struct Found {
    Lookup kind;
    size_t start;  // the allocation (block, freed, inside_block)
    size_t inside; // bytes from its start (inside_block)
};

Found find_block(const void *pointer)
{
    uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    uintptr_t base = reinterpret_cast<uintptr_t>(pool.arena);
    if (address < base || address >= base + sizeof pool.arena)
        return Found{Lookup::outside_pool, 0, 0};
    size_t offset = address - base;
    size_t start = offset / block_stride;
    if (offset % block_stride == 0 && pool.length[start])
        return Found{Lookup::block, start, 0};
    if (offset % block_stride == 0 && pool.freed[start])
        return Found{Lookup::freed, start, 0};
    for (size_t s = start + 1; s-- > 0;) {
        if (pool.length[s]) {
            if (offset < s * block_stride + pool.requested[s])
                return Found{Lookup::inside_block, s, offset - s * block_stride};
            break;
        }
    }
    return Found{Lookup::not_a_block, 0, 0};
}

} // namespace

void tcm_begin_run()
{
    if (pool.run_in_progress)
        tcm_release_run();
    pool.current_run++;
    pool.run_in_progress = true;
}

void tcm_release_run()
{
    for (size_t i = 0; i < block_count; i++)
        if (pool.length[i] && pool.run[i] == pool.current_run)
            release(i);
    pool.run_in_progress = false;
}

void tcm_end_run()
{
    pool.run_in_progress = false;
    for (size_t i = 0; i < block_count; i++)
        if (pool.length[i])
            check_guard(i, "the end of the op");
    char sizes[256] = "";
    size_t length = 0;
    int count = 0;
    for (size_t i = 0; i < block_count; i++) {
        if (!pool.length[i] || pool.run[i] != pool.current_run)
            continue;
        count++;
        if (length < sizeof sizes) {
            int written = snprintf(sizes + length, sizeof sizes - length, "%s%zu bytes from %s", count > 1 ? ", " : "",
                                   pool.requested[i], pool.owner[i]);
            length += written > 0 ? static_cast<size_t>(written) : 0;
        }
    }
    if (count)
        warning("%d TCM block%s allocated during the op %s not freed by its end: %s; they stay allocated in this "
                "core's %zu-byte pool", count, count == 1 ? "" : "s", count == 1 ? "was" : "were", sizes, pool_size);
}

void *tcm_allocate(size_t bytes, const char *owner)
{
    return allocate(bytes, owner);
}

void tcm_give_back(void *block, const char *found_at)
{
    Found found = find_block(block);
    if (found.kind != Lookup::block)
        violation("%s: the stream's TCM buffer is not allocated any more", found_at);
    check_guard(found.start, found_at);
    release(found.start);
}

size_t tcm_free_bytes()
{
    size_t count = 0;
    for (size_t i = 0; i < block_count; i++)
        count += pool.used[i] ? 0 : 1;
    return count * block_size;
}

size_t tcm_pool_size()
{
    return pool_size;
}

void tcm_copy(const TensorImpl &tensor, void *tcm, size_t offset, size_t count, size_t element_size, bool to_tcm)
{
    const char *what = to_tcm ? "tensor_to_tcm" : "tcm_to_tensor";
    size_t tensor_bytes = tensor.byte_size();
    size_t tensor_elements = tensor_bytes / element_size;
    if (offset > tensor_elements || count > tensor_elements - offset)
        violation("%s: elements [%zu, %zu) are outside the tensor, which holds %zu elements of %zu bytes", what, offset,
                  offset + count, tensor_elements, element_size);
    if (count > 0 && !tcm)
        violation("%s: the TCM pointer is NULL (did tcm_malloc fail?)", what);
    char *element = static_cast<char *>(tensor.data) + offset * element_size;
    if (to_tcm)
        memmove(tcm, element, count * element_size);
    else
        memmove(element, tcm, count * element_size);
}

} // namespace neuron_host

namespace torch {
namespace neuron {

void *tcm_malloc(size_t n)
{
    return neuron_host::allocate(n, "tcm_malloc");
}

void tcm_free(void *pointer)
{
    using namespace neuron_host;
    if (!pointer)
        return;
    Found found = find_block(pointer);
    switch (found.kind) {
    case Lookup::block:
        break;
    case Lookup::freed:
        violation("tcm_free: a double free: the %zu-byte TCM block was freed already", pool.requested[found.start]);
    case Lookup::inside_block:
        violation("tcm_free: the pointer is %zu bytes into a %zu-byte TCM block allocated by %s: free the pointer "
                  "tcm_malloc returned", found.inside, pool.requested[found.start], pool.owner[found.start]);
    case Lookup::outside_pool:
    case Lookup::not_a_block:
        violation("tcm_free: the pointer is not one that tcm_malloc returned%s",
                  found.kind == Lookup::outside_pool ? " (it is not in the TCM pool)" : "");
    }
    if (strcmp(pool.owner[found.start], "tcm_malloc") != 0)
        violation("tcm_free: the pointer is the TCM buffer of a stream accessor, not a block from tcm_malloc");
    check_guard(found.start, "tcm_free");
    release(found.start);
}

} // namespace neuron
} // namespace torch
