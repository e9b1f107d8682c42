/* tcm.cpp - the core's 16 KiB TCM (data RAM) pool: tcm_malloc and tcm_free,
 * neuron_dataram_allocate and its kin (custom_op.h), the stream accessors'
 * buffers, and tcm_accessor's copies.
 *
 * The pool is counted in 64-byte blocks, as the device's is, so the same
 * requests succeed and fail.  In memory, though, every allocation lives on
 * pages of its own, between pages that are not mapped for access
 * (PROT_NONE), so that a stray access faults where it happens:
 *
 *   - allocation i (the one whose first 64-byte block is block i) lives in
 *     slot i of an address range reserved once per core: a guard page, then
 *     256 slots of (16 KiB of data pages + 1 guard page);
 *   - a block's bytes end where its slot's data pages end: the first byte
 *     past a block whose size is a multiple of 64 is on a guard page.  A
 *     block stays 64-byte aligned, as on the device (or aligned as
 *     neuron_dataram_allocate was asked, up to a page), so one whose size is
 *     not a multiple of 64 has up to 63 bytes of slack after it before the
 *     guard page; and a block smaller than its pages has the rest of its
 *     first page before it;
 *   - the slack, the bytes before the block on its first page, and a
 *     fresh block itself hold the fill pattern (bytes FF FF FF 7F: NaN as
 *     float32, float16 and bfloat16, 2147483647 as int32), so a read of TCM
 *     the kernel never wrote gives a result that shows.  The slack and the
 *     bytes before are checked when the block is freed and at the end of
 *     each op: a write there is reported then;
 *   - after tcm_free the block's pages stay mapped, refilled with the
 *     pattern (mapping and unmapping on every tcm_malloc and tcm_free would
 *     cost two system calls each); they are checked at the end of each op
 *     and when the slot is handed out again.
 *
 * The kernel's own loads and stores in the reserved range are checked at
 * the access, to the byte, by tcm_check_access (access_checks.cpp calls it
 * when the kernel was compiled with the host target's access checks): the
 * guard pages and the pattern are for the code that is not (libc, a build
 * with AddressSanitizer, which poisons the pool instead, or a compiler
 * without the checks).  A fault in the reserved range is described by
 * tcm_describe_fault, which the runner calls
 * (customop_host_call.describe_fault).  tensor_to_tcm, tcm_to_tensor and
 * neuron_memcpy check their TCM range against the block themselves. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "neuron/host/accessors.h"
#include "neuron/host/violation.h"
#include "elements.h"
#include "ledger.h"
#include "runtime.h"
#include "tcm_poison.h"
#include "torch/torch.h"

namespace neuron_host {
namespace {

const size_t pool_size = static_cast<size_t>(16) * 1024;
const size_t block_size = 64;
const size_t block_count = pool_size / block_size;
// The fill pattern, repeated from every address that is a multiple of 4.
constexpr unsigned char fill_bytes[4] = {0xff, 0xff, 0xff, 0x7f};
const char *const tcm_malloc_owner = "tcm_malloc";
const char *const dataram_owner = "neuron_dataram_allocate";
// What a message about a stray access says to do next: AddressSanitizer
// finds it at the kernel's line.  A kernel built with it has had it
// reported already (every byte of the pool outside live blocks is
// poisoned): a write found later is not the op's error then, the report
// is, but a fault at the access still is, and the report is on stderr.
#ifdef CUSTOMOP_HOST_ASAN
#define FIND_THE_ACCESS(what) ""
#define FIND_THE_FAULT "; AddressSanitizer's report of the access, on stderr, names the kernel's line"
#else
#define FIND_THE_ACCESS(what) "; build with --sanitize=address to find " what
#define FIND_THE_FAULT FIND_THE_ACCESS("the kernel's line")
#endif

struct Pool {
    // The device's accounting.  For the first block of each allocation:
    // its length in blocks (0 for free blocks and the rest of an
    // allocation), the bytes asked for, who asked ("tcm_malloc",
    // "neuron_dataram_allocate", or a stream accessor for its buffer) and
    // from where (the caller of the first two).
    uint16_t length[block_count];
    size_t requested[block_count];
    // The bytes from the block's first byte to the end of its slot's data
    // pages: the block rounded to 64 bytes, or to its alignment.
    size_t span[block_count];
    const char *owner[block_count];
    const void *caller[block_count];
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
    size_t blocks_in_use;
    size_t peak_blocks; // since tcm_peak_reset

    // The memory: NULL until the first allocation.
    char *area;
    size_t area_size;
    size_t page;
    size_t data_size; // the data pages of a slot: 16 KiB rounded up to pages
    size_t slot_size; // data_size and a guard page
    // How many pages at the end of each slot's data pages are readable and
    // writable now (they hold the pattern outside a live block's bytes).
    uint16_t open_pages[block_count];
    // Bit i % 64 of open_slots[i / 64]: slot i has open pages (the slots
    // the end of an op checks, in order, without visiting the others).
    uint64_t open_slots[(block_count + 63) / 64];
    // The allocations of the current run still live.
    size_t live_this_run;
};

Pool pool;

size_t rounded_size(size_t bytes)
{
    return bytes == 0 ? block_size : (bytes + block_size - 1) / block_size * block_size;
}

char *slot_data_end(size_t slot)
{
    return pool.area + pool.page + slot * pool.slot_size + pool.data_size;
}

// Where the bytes of the allocation at start begin.
char *block_memory(size_t start)
{
    return slot_data_end(start) - pool.span[start];
}

size_t pages_for(size_t bytes)
{
    return (bytes + pool.page - 1) / pool.page;
}

// Allocations the kernel reaches through a pointer (not a stream's buffer,
// which is accounting only).
bool has_memory(const char *owner)
{
    return owner == tcm_malloc_owner || owner == dataram_owner;
}

bool is_kernel_block(size_t start)
{
    return pool.length[start] && has_memory(pool.owner[start]);
}

// The pattern as a word, for the aligned middle of a region (the pattern
// repeats every 4 bytes from every address that is a multiple of 4).
uint64_t fill_word()
{
    uint32_t half;
    memcpy(&half, fill_bytes, sizeof half);
    return (static_cast<uint64_t>(half) << 32) | half;
}

#ifndef CUSTOMOP_HOST_ASAN
// The pattern over a span of addresses that starts at a multiple of 4:
// [pattern_span.bytes + a % 4, ...) holds what the pattern has from address
// a on, for up to pattern_span_size bytes.
const size_t pattern_span_size = 4096;
struct PatternSpan {
    unsigned char bytes[pattern_span_size + 4];
    constexpr PatternSpan() : bytes()
    {
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = fill_bytes[i % 4];
    }
};
constexpr PatternSpan pattern_span;

const unsigned char *pattern_at(const char *address)
{
    return pattern_span.bytes + reinterpret_cast<uintptr_t>(address) % 4;
}
#endif

// The pattern at every address of [from, to).  ASan must not see the
// runtime write the poisoned pool: with ASan, a loop of plain stores (it
// cannot become a memset call: the pattern's bytes differ); without,
// memcpy from the pattern span.
__attribute__((no_sanitize_address)) void fill(char *from, char *to)
{
#ifndef CUSTOMOP_HOST_ASAN
    RuntimeCopy runtime; // the core library's memcpy checks the kernel's copies, not these
    while (from < to) {
        size_t length = static_cast<size_t>(to - from) < pattern_span_size ? static_cast<size_t>(to - from)
                                                                            : pattern_span_size;
        memcpy(from, pattern_at(from), length);
        from += length;
    }
#else
    for (; from < to && reinterpret_cast<uintptr_t>(from) % 8 != 0; from++)
        *from = static_cast<char>(fill_bytes[reinterpret_cast<uintptr_t>(from) % 4]);
    uint64_t word = fill_word();
    for (; to - from >= 8; from += 8)
        *reinterpret_cast<uint64_t *>(from) = word;
    for (; from < to; from++)
        *from = static_cast<char>(fill_bytes[reinterpret_cast<uintptr_t>(from) % 4]);
#endif
}

// The first byte of [from, to) that does not hold the pattern, or NULL.
// Without ASan, memcmp against the pattern span skips the spans that hold
// it; the loop finds the byte (with ASan, it reads everything: ASan's
// memcmp would report the poisoned pool).
__attribute__((no_sanitize_address)) const char *first_overwritten(const char *from, const char *to)
{
#ifndef CUSTOMOP_HOST_ASAN
    while (from < to) {
        size_t length = static_cast<size_t>(to - from) < pattern_span_size ? static_cast<size_t>(to - from)
                                                                            : pattern_span_size;
        if (memcmp(from, pattern_at(from), length) != 0) {
            to = from + length;
            break;
        }
        from += length;
    }
#endif
    for (; from < to && reinterpret_cast<uintptr_t>(from) % 8 != 0; from++)
        if (static_cast<unsigned char>(*from) != fill_bytes[reinterpret_cast<uintptr_t>(from) % 4])
            return from;
    uint64_t word = fill_word();
    for (; to - from >= 8; from += 8)
        if (*reinterpret_cast<const uint64_t *>(from) != word)
            break;
    for (; from < to; from++)
        if (static_cast<unsigned char>(*from) != fill_bytes[reinterpret_cast<uintptr_t>(from) % 4])
            return from;
    return nullptr;
}

// " in relu(at::Tensor const&)", or "" when the caller has no name.
void describe_caller(size_t start, char *text, size_t size)
{
    if (has_memory(pool.owner[start]))
        describe_code_address(pool.caller[start], text, size);
    else if (size > 0)
        text[0] = '\0';
}

// "4096-byte TCM block allocated by tcm_malloc in relu(at::Tensor const&)"
void describe_block(size_t start, char *text, size_t size)
{
    char caller[256];
    describe_caller(start, caller, sizeof caller);
    snprintf(text, size, "%zu-byte TCM block allocated by %s%s", pool.requested[start], pool.owner[start], caller);
}

void reserve_area()
{
    pool.page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pool.data_size = pages_for(pool_size) * pool.page;
    pool.slot_size = pool.data_size + pool.page;
    size_t size = pool.page + block_count * pool.slot_size;
    void *area = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        violation("tcm_malloc: cannot reserve %zu bytes of address space for the emulated TCM pool", size);
    pool.area = static_cast<char *>(area);
    pool.area_size = size;
    tcm_poison(pool.area, pool.area_size);
    managed_range_set(managed_tcm, pool.area, pool.area_size);
}

void describe_position(const char *address, char *text, size_t size);

// Checks that the open pages of slot, outside [keep_from, keep_to) (the
// bytes of its live block), still hold the pattern; found_at says where,
// for the message.
void check_slot(size_t slot, const char *keep_from, const char *keep_to, const char *found_at)
{
    char *end = slot_data_end(slot);
    char *begin = end - pool.open_pages[slot] * pool.page;
    const char *damage = first_overwritten(begin, keep_from);
    if (!damage)
        damage = first_overwritten(keep_to, end);
    if (!damage)
        return;
    char text[768];
    if (is_kernel_block(slot)) {
        describe_block(slot, text, sizeof text);
        if (damage < keep_from)
            violation("wrote before the start of a %s (%zu bytes before it; found at %s; on the device this "
                      "overwrites the previous block or a stream accessor's buffer" FIND_THE_ACCESS("the write") ")", text,
                      static_cast<size_t>(keep_from - damage), found_at);
        violation("wrote past the end of a %s (found at %s; on the device this overwrites the next block or a "
                  "stream accessor's buffer" FIND_THE_ACCESS("the write") ")", text, found_at);
    }
    describe_position(damage, text, sizeof text);
    violation("wrote into TCM memory outside any block, %s (found at %s; on the device this overwrites whatever "
              "the pool gives out there next" FIND_THE_ACCESS("the write") ")", text, found_at);
}

void check_guard(size_t start, const char *found_at)
{
    char *memory = block_memory(start);
    check_slot(start, memory, memory + pool.requested[start], found_at);
}

// Makes exactly the last `pages` data pages of slot accessible; pages newly
// opened get the pattern.
void open_slot(size_t slot, size_t pages)
{
    size_t open = pool.open_pages[slot];
    char *end = slot_data_end(slot);
    if (pages > open) {
        char *from = end - pages * pool.page;
        char *to = end - open * pool.page;
        if (mprotect(from, static_cast<size_t>(to - from), PROT_READ | PROT_WRITE) != 0)
            violation("tcm_malloc: cannot map the emulated TCM pool's pages");
        fill(from, to);
    } else if (pages < open) {
        mprotect(end - open * pool.page, (open - pages) * pool.page, PROT_NONE);
    }
    pool.open_pages[slot] = static_cast<uint16_t>(pages);
    uint64_t bit = static_cast<uint64_t>(1) << (slot % 64);
    if (pages)
        pool.open_slots[slot / 64] |= bit;
    else
        pool.open_slots[slot / 64] &= ~bit;
}

// Whether a block may start at block index start with that alignment: the
// pool's base is taken as aligned to its size, so an alignment up to 16 KiB
// is a matter of the index (the memory is aligned too up to a page).
bool aligned_start(size_t start, size_t align)
{
    return align <= block_size || (start * block_size) % align == 0;
}

void *allocate(size_t bytes, const char *owner, const void *caller, size_t align = block_size)
{
    if (bytes > pool_size)
        return nullptr;
    size_t blocks = rounded_size(bytes) / block_size;
    for (size_t start = 0; start + blocks <= block_count; start++) {
        if (!aligned_start(start, align))
            continue;
        size_t free_run = 0;
        while (free_run < blocks && !pool.used[start + free_run])
            free_run++;
        if (free_run < blocks) {
            start += free_run;
            continue;
        }
        if (!pool.area)
            reserve_area();
        bool with_memory = has_memory(owner);
        // A parked slot is checked before it is handed out again.
        if (with_memory && pool.open_pages[start])
            check_slot(start, slot_data_end(start), slot_data_end(start), "tcm_malloc");
        for (size_t i = 0; i < blocks; i++) {
            pool.used[start + i] = true;
            pool.freed[start + i] = false;
        }
        pool.length[start] = static_cast<uint16_t>(blocks);
        pool.requested[start] = bytes;
        size_t memory_align = align < pool.page ? align : pool.page;
        pool.span[start] = (blocks * block_size + memory_align - 1) / memory_align * memory_align;
        pool.owner[start] = owner;
        pool.caller[start] = caller;
        pool.run[start] = pool.current_run;
        pool.live_this_run++;
        pool.blocks_in_use += blocks;
        if (pool.blocks_in_use > pool.peak_blocks)
            pool.peak_blocks = pool.blocks_in_use;
        // A stream's buffer is accounting only: the host's streams read and
        // write the tensor directly.  Its pointer is on the slot's guard page.
        if (!with_memory)
            return slot_data_end(start);
        open_slot(start, pages_for(pool.span[start]));
        char *memory = block_memory(start);
        tcm_unpoison(memory, bytes);
        return memory;
    }
    return nullptr;
}

// Gives the allocation at start back to the pool; its pages stay open,
// holding the pattern again: only the block's bytes are refilled when the
// rest was just found to hold it (checked), all of them otherwise (after a
// violation, what the kernel wrote past the block is not reported at the
// next op).
void release(size_t start, bool checked)
{
    access_block_seen(nullptr, 0);
    if (has_memory(pool.owner[start])) {
        char *memory = block_memory(start);
        if (checked)
            fill(memory, memory + pool.requested[start]);
        else
            fill(slot_data_end(start) - pool.open_pages[start] * pool.page, slot_data_end(start));
        tcm_poison(memory, pool.requested[start]);
    }
    if (pool.run[start] == pool.current_run)
        pool.live_this_run--;
    for (size_t i = 0; i < pool.length[start]; i++)
        pool.used[start + i] = false;
    pool.blocks_in_use -= pool.length[start];
    pool.length[start] = 0;
    pool.freed[start] = true;
}

// The slot an address of the reserved range lies in: -1 for the guard
// page before the first slot, block_count outside the range.
long slot_of(const char *address)
{
    if (!pool.area || address < pool.area || address >= pool.area + pool.area_size)
        return static_cast<long>(block_count);
    if (address < pool.area + pool.page)
        return -1;
    return static_cast<long>(static_cast<size_t>(address - pool.area - pool.page) / pool.slot_size);
}

bool in_slot(long slot)
{
    return slot >= 0 && slot < static_cast<long>(block_count);
}

// Where address (in the reserved range) lies, as messages say it: "at byte
// 4096 of the 4096-byte TCM block allocated by tcm_malloc in f(), past its
// end".  Relative to the block of its slot when that is live, else to the
// nearest live block below it (past its end), else above it (before its
// start).
void describe_position(const char *address, char *text, size_t size)
{
    long slot = slot_of(address);
    long block = -1;
    if (in_slot(slot) && is_kernel_block(static_cast<size_t>(slot))) {
        block = slot;
    } else {
        for (long s = slot - 1; s >= 0 && block < 0; s--)
            if (s < static_cast<long>(block_count) && is_kernel_block(static_cast<size_t>(s)))
                block = s;
        for (long s = slot + 1; s < static_cast<long>(block_count) && block < 0; s++)
            if (s >= 0 && is_kernel_block(static_cast<size_t>(s)))
                block = s;
    }
    char described[512];
    if (block < 0) {
        size_t at = static_cast<size_t>(slot);
        if (in_slot(slot) && pool.freed[at] && has_memory(pool.owner[at])) {
            describe_block(at, described, sizeof described);
            snprintf(text, size, "at byte %lld of a %s, which tcm_free freed",
                     static_cast<long long>(address - block_memory(at)), described);
        } else {
            snprintf(text, size, "in the TCM pool, where no block is allocated");
        }
        return;
    }
    size_t start = static_cast<size_t>(block);
    describe_block(start, described, sizeof described);
    long long offset = static_cast<long long>(address - block_memory(start));
    const char *where = offset < 0 ? ", before its start" : ", past its end";
    if (offset >= 0 && static_cast<size_t>(offset) < pool.requested[start])
        where = "";
    snprintf(text, size, "at byte %lld of the %s%s", offset, described, where);
}

// Where a pointer given back to the pool lies.
enum class Lookup { block, freed, inside_block, outside_pool, not_a_block };
struct Found {
    Lookup kind;
    size_t start;  // the allocation (block, freed, inside_block)
    size_t inside; // bytes from its start (inside_block)
};

Found find_block(const void *pointer)
{
    const char *address = static_cast<const char *>(pointer);
    long at = slot_of(address);
    if (at == static_cast<long>(block_count))
        return Found{Lookup::outside_pool, 0, 0};
    if (at < 0)
        return Found{Lookup::not_a_block, 0, 0};
    size_t slot = static_cast<size_t>(at);
    if (pool.length[slot]) {
        const char *memory = has_memory(pool.owner[slot]) ? block_memory(slot) : slot_data_end(slot);
        if (address == memory)
            return Found{Lookup::block, slot, 0};
        if (address > memory && address < memory + pool.requested[slot])
            return Found{Lookup::inside_block, slot, static_cast<size_t>(address - memory)};
        return Found{Lookup::not_a_block, 0, 0};
    }
    if (pool.freed[slot] && has_memory(pool.owner[slot]) && address == block_memory(slot))
        return Found{Lookup::freed, slot, 0};
    return Found{Lookup::not_a_block, 0, 0};
}

// A copy's TCM side, [tcm, tcm + bytes): when it is in the pool (or
// always, with in_pool_only), it must lie in the bytes asked for of one live
// block.
void check_copy_range(const char *what, const char *direction, const char *tcm, size_t bytes, bool in_pool_only)
{
    long at = slot_of(tcm);
    if (at == static_cast<long>(block_count)) {
        if (in_pool_only)
            violation("%s: the local pointer is not in data RAM (the TCM pool): the device copies only between HBM "
                      "and data RAM; allocate the local side with neuron_dataram_allocate or tcm_malloc", what);
        return;
    }
    size_t slot = static_cast<size_t>(at);
    if (in_slot(at) && is_kernel_block(slot)) {
        const char *memory = block_memory(slot);
        size_t requested = pool.requested[slot];
        if (tcm >= memory && tcm <= memory + requested && bytes <= static_cast<size_t>(memory + requested - tcm))
            return;
        if (tcm >= memory && tcm < memory + requested) {
            char block[512];
            describe_block(slot, block, sizeof block);
            violation("%s: %zu bytes %s byte %zu of the %s reach %zu bytes past its end (on the device the copy "
                      "reaches the next block or a stream accessor's buffer)", what, bytes, direction,
                      static_cast<size_t>(tcm - memory), block,
                      bytes - static_cast<size_t>(memory + requested - tcm));
        }
    }
    char where[768];
    describe_position(tcm, where, sizeof where);
    violation("%s: the TCM pointer is %s, outside any block (on the device the copy reaches another block or a "
              "stream accessor's buffer)", what, where);
}

__attribute__((destructor)) void unmap_area()
{
    if (pool.area && !current_call()) {
        managed_range_set(managed_tcm, nullptr, 0);
        munmap(pool.area, pool.area_size);
    }
}

// A signed element offset as a kernel meant it: size_t arithmetic that went
// below 0 wraps, and -75 reads better than 18446744073709551541.
long long signed_offset(size_t offset)
{
    return static_cast<long long>(offset);
}

} // namespace

void fill_with_pattern(char *from, char *to)
{
    fill(from, to);
}

void tcm_check_access(const char *address, size_t size, bool writes, const void *code)
{
    long at = slot_of(address);
    char access[384], where[768];
    if (in_slot(at) && is_kernel_block(static_cast<size_t>(at))) {
        const char *memory = block_memory(static_cast<size_t>(at));
        size_t requested = pool.requested[at];
        if (address >= memory && address < memory + requested) {
            size_t left = static_cast<size_t>(memory + requested - address);
            if (size <= left) {
                access_block_seen(memory, requested);
                return;
            }
            // An access that starts inside the block and leaves it.
            describe_access(writes, size, code, access, sizeof access);
            describe_block(static_cast<size_t>(at), where, sizeof where);
            violation("%s at byte %zu of the %s, %zu byte%s past its end (on the device it %s the next block or a "
                      "stream accessor's buffer)", access, static_cast<size_t>(address - memory), where, size - left,
                      size - left == 1 ? "" : "s", writes ? "overwrites" : "reads");
        }
    }
    describe_access(writes, size, code, access, sizeof access);
    describe_position(address, where, sizeof where);
    violation("%s %s (on the device it %s another block or a stream accessor's buffer)", access, where,
              writes ? "overwrites" : "reads");
}

void tcm_begin_run()
{
    if (pool.run_in_progress)
        tcm_release_run();
    pool.current_run++;
    pool.live_this_run = 0;
    pool.run_in_progress = true;
}

void tcm_release_run()
{
    for (size_t i = 0; i < block_count; i++)
        if (pool.length[i] && pool.run[i] == pool.current_run)
            release(i, false);
    // What the abandoned kernel wrote into freed pages is not the next op's.
    for (size_t i = 0; i < block_count; i++)
        if (pool.open_pages[i] && !is_kernel_block(i))
            fill(slot_data_end(i) - pool.open_pages[i] * pool.page, slot_data_end(i));
    pool.run_in_progress = false;
}

void tcm_end_run()
{
    pool.run_in_progress = false;
    for (size_t word = 0; word < sizeof pool.open_slots / sizeof pool.open_slots[0]; word++) {
        for (uint64_t bits = pool.open_slots[word]; bits; bits &= bits - 1) {
            size_t i = word * 64 + static_cast<size_t>(__builtin_ctzll(bits));
            if (is_kernel_block(i))
                check_guard(i, "the end of the op");
            else
                check_slot(i, slot_data_end(i), slot_data_end(i), "the end of the op");
        }
    }
    if (pool.live_this_run == 0)
        return;
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
    return allocate(bytes, owner, nullptr);
}

// tcm_free and neuron_dataram_deallocate (what): the two allocators share
// the pool, as on the device, so either frees a block of the other.
void free_block(void *pointer, const char *what)
{
    if (!pointer)
        return;
    Found found = find_block(pointer);
    char block[512];
    switch (found.kind) {
    case Lookup::block:
        break;
    case Lookup::freed:
        violation("%s: a double free: the %zu-byte TCM block was freed already", what, pool.requested[found.start]);
    case Lookup::inside_block:
        describe_block(found.start, block, sizeof block);
        violation("%s: the pointer is %zu bytes into a %s: free the pointer %s returned", what, found.inside,
                  block, pool.owner[found.start]);
    case Lookup::outside_pool:
    case Lookup::not_a_block:
        violation("%s: the pointer is not one that tcm_malloc or neuron_dataram_allocate returned%s", what,
                  found.kind == Lookup::outside_pool ? " (it is not in the TCM pool)" : "");
    }
    if (!has_memory(pool.owner[found.start]))
        violation("%s: the pointer is the TCM buffer of a stream accessor, not a block from tcm_malloc or "
                  "neuron_dataram_allocate", what);
    check_guard(found.start, what);
    release(found.start, true);
}

void tcm_give_back(void *block, const char *found_at)
{
    Found found = find_block(block);
    if (found.kind != Lookup::block)
        violation("%s: the stream's TCM buffer is not allocated any more", found_at);
    release(found.start, false);
}

size_t tcm_free_bytes()
{
    return (block_count - pool.blocks_in_use) * block_size;
}

size_t tcm_pool_size()
{
    return pool_size;
}

void tcm_peak_reset()
{
    pool.peak_blocks = pool.blocks_in_use;
}

uint64_t tcm_peak_bytes()
{
    return pool.peak_blocks * block_size;
}

int tcm_describe_fault(const void *address, char *text, size_t size)
{
    const char *at = static_cast<const char *>(address);
    if (!pool.area || at < pool.area || at >= pool.area + pool.area_size)
        return 0;
    char where[768];
    describe_position(at, where, sizeof where);
    snprintf(text, size, "a read or write %s (on the device it reaches another block or a stream accessor's "
             "buffer" FIND_THE_FAULT ")", where);
    return 1;
}

void tcm_check_local_range(const char *what, const char *direction, const void *local, size_t bytes)
{
    if (!local)
        violation("%s: the local pointer is NULL (did the allocation fail?)", what);
    check_copy_range(what, direction, static_cast<const char *>(local), bytes, true);
}

void tcm_copy(const TensorImpl &tensor, void *tcm, size_t offset, size_t count, size_t element_size,
              int element_dtype, bool to_tcm)
{
    const char *what = to_tcm ? "tensor_to_tcm" : "tcm_to_tensor";
    if (element_dtype >= 0)
        warn_element_type(tensor, what, static_cast<c10::ScalarType>(element_dtype));
    size_t tensor_bytes = tensor.byte_size();
    size_t tensor_elements = tensor_bytes / element_size;
    if (offset > tensor_elements || count > tensor_elements - offset)
        violation("%s: elements [%lld, %lld) are outside %s, which holds %zu elements of %zu bytes", what,
                  signed_offset(offset), signed_offset(offset + count), describe_tensor(tensor).c_str(),
                  tensor_elements, element_size);
    if (count > 0 && !tcm)
        violation("%s: the TCM pointer is NULL (did tcm_malloc fail?)", what);
    size_t bytes = count * element_size;
    if (count > 0)
        check_copy_range(what, to_tcm ? "into" : "from", static_cast<const char *>(tcm), bytes, false);
    char *element = static_cast<char *>(tensor.data) + offset * element_size;
    windows_sync(element, bytes);
    ledger_tcm_copy(to_tcm, bytes);
    if (to_tcm) {
        ledger_read(tensor, element, bytes);
        memmove(tcm, element, bytes);
    } else {
        ledger_write(tensor, element, bytes);
        memmove(element, tcm, bytes);
        windows_refresh(element, bytes);
    }
}

} // namespace neuron_host

namespace torch {
namespace neuron {

void *tcm_malloc(size_t n)
{
    return neuron_host::allocate(n, neuron_host::tcm_malloc_owner, __builtin_return_address(0));
}

void tcm_free(void *pointer)
{
    neuron_host::free_block(pointer, "tcm_free");
}

} // namespace neuron
} // namespace torch

int neuron_dataram_allocate(unsigned size, void **out, unsigned align)
{
    using namespace neuron_host;
    if (!out)
        violation("neuron_dataram_allocate: out is NULL: pass the address of the pointer to set");
    if (align & (align - 1))
        violation("neuron_dataram_allocate: an alignment of %u bytes: it must be a power of two", align);
    if (align > pool_size)
        violation("neuron_dataram_allocate: an alignment of %u bytes: data RAM is %zu bytes", align, pool_size);
    *out = allocate(size, dataram_owner, __builtin_return_address(0), align < block_size ? block_size : align);
    return *out ? 0 : -1;
}

void neuron_dataram_deallocate(void *local)
{
    neuron_host::free_block(local, "neuron_dataram_deallocate");
}

int neuron_dataram_max_free_space(unsigned *bytes, unsigned align)
{
    using namespace neuron_host;
    if (!bytes)
        violation("neuron_dataram_max_free_space: bytes is NULL: pass the address of the count to set");
    if (align & (align - 1))
        violation("neuron_dataram_max_free_space: an alignment of %u bytes: it must be a power of two", align);
    size_t largest = 0;
    for (size_t start = 0; start < block_count; start++) {
        if (pool.used[start] || !aligned_start(start, align))
            continue;
        size_t run = 0;
        while (start + run < block_count && !pool.used[start + run])
            run++;
        if (run * block_size > largest)
            largest = run * block_size;
    }
    *bytes = static_cast<unsigned>(largest);
    return 0;
}
