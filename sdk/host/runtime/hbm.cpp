/* hbm.cpp - HBM addresses on the host: q7_data_ptr(), Q7PtrType::operator[],
 * neuron_hbm_allocate and its kin, and neuron_memcpy (custom_op.h).
 *
 * On the device an HBM address is a 64-bit SoC address that the 32-bit
 * core cannot dereference.  Here it is an address inside a range this core
 * reserves with no access allowed (PROT_NONE), so that using one as a
 * pointer stops the op where the device would read garbage: at the access,
 * by the access checks (access_checks.cpp), or by the fault that code
 * without them takes (hbm_describe_fault says what it was).  A table maps
 * each address to the memory it stands for: a tensor's (given an address
 * the first time q7_data_ptr() is called on it during the op) or an
 * allocation's.  Each object starts on a page of its own, with a page
 * between objects, so that an address just past one is in none.
 *
 * HBM allocations come from a per-op scratch of hbm_scratch_limit bytes per
 * core (the device's size is not known): beyond it neuron_hbm_allocate
 * returns -1, and what the op leaves allocated is freed at its end with a
 * warning.  Addresses are not reused within an op, so a freed allocation's
 * address is recognised as one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "custom_op.h"
#include "neuron/host/ledger.h"
#include "neuron/host/tensor.h"
#include "neuron/host/violation.h"
#include "elements.h"
#include "hbm.h"
#include "ledger.h"
#include "runtime.h"

namespace neuron_host {
namespace {

const size_t hbm_scratch_limit = 64u << 20;
// The first reservation of HBM addresses; a call that needs more gets more.
const size_t first_region_size = 256u << 20;

struct Region {
    char *base;
    size_t size;
    size_t used;
};

struct HbmState {
    std::vector<Region> regions;     // regions[0] is kept from call to call
    size_t next_region_size = first_region_size;
    std::vector<std::unique_ptr<HbmObject>> objects; // of the call in progress
    const HbmObject *last_found = nullptr;
    size_t scratch_in_use = 0;
    size_t page = 0;

    // When the library is unloaded (not during a call: see FreedWhenIdle).
    ~HbmState()
    {
        for (const Region &region : regions)
            munmap(region.base, region.size);
    }
};

FreedWhenIdle<HbmState> hbm_state;
HbmState &hbm = hbm_state.value;

size_t round_up(size_t value, size_t to)
{
    return (value + to - 1) / to * to;
}

void publish_ranges()
{
    if (hbm.regions.empty()) {
        managed_range_set(managed_hbm, nullptr, 0);
        managed_extra_ranges(false);
        return;
    }
    managed_range_set(managed_hbm, hbm.regions[0].base, hbm.regions[0].size);
    managed_extra_ranges(hbm.regions.size() > 1);
}

// A new HBM address for bytes, aligned to align: the first page of its
// region is never an object's, and a page separates objects.
uint64_t assign_address(size_t bytes, size_t align)
{
    if (!hbm.page) {
        long size = sysconf(_SC_PAGESIZE);
        hbm.page = size > 0 ? static_cast<size_t>(size) : 4096;
    }
    size_t page = hbm.page;
    align = align > page ? align : page;
    size_t need = round_up(bytes, page) + page;
    for (Region &region : hbm.regions) {
        uintptr_t at = round_up(reinterpret_cast<uintptr_t>(region.base) + region.used, align);
        size_t offset = at - reinterpret_cast<uintptr_t>(region.base);
        if (offset <= region.size && need <= region.size - offset) {
            region.used = offset + need;
            return at;
        }
    }
    size_t size = hbm.next_region_size;
    while (size < need + align + page)
        size *= 2;
    void *base = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        violation("cannot reserve %zu bytes of address space for the emulated HBM addresses", size);
    hbm.regions.push_back(Region{static_cast<char *>(base), size, page});
    hbm.next_region_size = size * 2;
    publish_ranges();
    return assign_address(bytes, align);
}

HbmObject &add_object(size_t bytes, size_t align)
{
    std::unique_ptr<HbmObject> object(new HbmObject());
    object->address = assign_address(bytes, align);
    object->bytes = bytes;
    hbm.objects.push_back(std::move(object));
    return *hbm.objects.back();
}

bool inside(const HbmObject &object, uint64_t address, bool end_counts)
{
    return address >= object.address &&
           (address - object.address < object.bytes || (end_counts && address - object.address == object.bytes));
}

// The object nearest below address (whose end it is past), or else nearest
// above it.
const HbmObject *nearest(uint64_t address)
{
    const HbmObject *below = nullptr, *above = nullptr;
    for (const auto &object : hbm.objects) {
        if (object->address <= address && (!below || object->address > below->address))
            below = object.get();
        if (object->address > address && (!above || object->address < above->address))
            above = object.get();
    }
    return below ? below : above;
}

void check_context(const char *what, const void *ctx)
{
    if (ctx != neuron_translate_ctx())
        violation("%s: the context %p is not the one neuron_translate_ctx() returns on this core", what, ctx);
}

// Frees an allocation's memory and forgets the windows onto it.
void free_allocation(HbmObject &object)
{
    windows_forget(object);
    free(object.memory);
    object.memory = nullptr;
    object.freed = true;
    hbm.scratch_in_use -= object.bytes;
}

// Forgets the call's objects (and so the tensors they kept) and the HBM
// regions beyond the first (the next call gets one as big as this one
// needed).
void forget_objects()
{
    hbm.objects.clear();
    hbm.last_found = nullptr;
    hbm.scratch_in_use = 0;
    if (hbm.regions.size() > 1) {
        size_t total = 0;
        for (const Region &region : hbm.regions) {
            total += region.size;
            munmap(region.base, region.size);
        }
        hbm.regions.clear();
        hbm.next_region_size = total;
    } else if (!hbm.regions.empty()) {
        hbm.regions[0].used = hbm.page;
    }
    publish_ranges();
}

// Checks the HBM side of neuron_memcpy: [address, address + bytes) inside
// one live object.
const HbmObject &checked_range(uint64_t address, uint32_t bytes)
{
    const HbmObject *object = hbm_find(address, bytes == 0);
    if (!object)
        violation("neuron_memcpy: the HBM address is %s", hbm_describe_position(address).c_str());
    if (object->freed)
        violation("neuron_memcpy: the HBM address is in %s", hbm_describe_object(*object).c_str());
    uint64_t offset = address - object->address;
    if (bytes > object->bytes - offset)
        violation("neuron_memcpy: %u bytes at byte %llu of %s reach %llu bytes past its end (it holds %zu bytes; on "
                  "the device the copy reaches whatever follows it in HBM)", bytes,
                  static_cast<unsigned long long>(offset), hbm_describe_object(*object).c_str(),
                  static_cast<unsigned long long>(bytes - (object->bytes - offset)), object->bytes);
    return *object;
}

void copy(void *local, uint64_t hbm_address, uint32_t bytes, bool to_local)
{
    if (!current_call())
        violation("neuron_memcpy called outside an op");
    const HbmObject &object = checked_range(hbm_address, bytes);
    tcm_check_local_range("neuron_memcpy", to_local ? "into" : "from", local, bytes);
    char *memory = object.memory + (hbm_address - object.address);
    windows_sync(memory, bytes);
    ledger_tcm_copy(to_local, bytes);
    if (to_local) {
        if (object.tensor)
            ledger_read(*object.tensor, memory, bytes);
        memmove(local, memory, bytes);
    } else {
        if (object.tensor)
            ledger_write(*object.tensor, memory, bytes);
        memmove(memory, local, bytes);
        windows_refresh(memory, bytes);
    }
}

} // namespace

const HbmObject *hbm_find(uint64_t address, bool end_counts)
{
    if (hbm.last_found && inside(*hbm.last_found, address, end_counts))
        return hbm.last_found;
    for (const auto &object : hbm.objects)
        if (inside(*object, address, end_counts))
            return hbm.last_found = object.get();
    return nullptr;
}

std::string hbm_describe_object(const HbmObject &object)
{
    if (object.tensor)
        return describe_tensor(*object.tensor);
    char caller[256];
    describe_code_address(object.caller, caller, sizeof caller);
    return "the " + std::to_string(object.bytes) + "-byte HBM allocation made by neuron_hbm_allocate" + caller +
           (object.freed ? ", which neuron_hbm_deallocate freed" : "");
}

std::string hbm_offset_text(const HbmObject &object, uint64_t address)
{
    return std::to_string(static_cast<long long>(address - object.address));
}

std::string hbm_describe_position(uint64_t address)
{
    const HbmObject *object = hbm_find(address, false);
    if (object)
        return "byte " + hbm_offset_text(*object, address) + " of " + hbm_describe_object(*object);
    object = nearest(address);
    if (!object)
        return "an address of no tensor or HBM allocation";
    std::string text = "byte " + hbm_offset_text(*object, address) + " of " + hbm_describe_object(*object);
    if (address < object->address)
        return text + ", before its start";
    return text + ", past its end (it holds " + std::to_string(object->bytes) + " bytes)";
}

void hbm_check_access(uintptr_t address, size_t size, bool writes, const void *code)
{
    bool ours = false;
    for (const Region &region : hbm.regions)
        ours = ours || address - reinterpret_cast<uintptr_t>(region.base) < region.size;
    if (!ours)
        return;
    char access[384];
    describe_access(writes, size, code, access, sizeof access);
    violation("%s at HBM address 0x%llx, %s: an HBM address is not a pointer (on the device the access %s "
              "garbage); map it with neuron_translate(neuron_translate_ctx(), address), or copy between it and data "
              "RAM with neuron_memcpy", access, static_cast<unsigned long long>(address),
              hbm_describe_position(address).c_str(), writes ? "writes" : "reads");
}

int hbm_describe_fault(const void *address, char *text, size_t size)
{
    uintptr_t at = reinterpret_cast<uintptr_t>(address);
    bool ours = false;
    for (const Region &region : hbm.regions)
        ours = ours || at - reinterpret_cast<uintptr_t>(region.base) < region.size;
    if (!ours)
        return 0;
    snprintf(text, size, "a read or write at HBM address 0x%llx, %s: an HBM address is not a pointer (on the "
             "device the access reaches garbage); map it with neuron_translate(neuron_translate_ctx(), address), or "
             "copy between it and data RAM with neuron_memcpy", static_cast<unsigned long long>(at),
             hbm_describe_position(at).c_str());
    return 1;
}

void hbm_end_run()
{
    windows_end_run(true);
    char sizes[256] = "";
    size_t length = 0;
    int count = 0;
    for (const auto &object : hbm.objects) {
        if (object->tensor || object->freed)
            continue;
        count++;
        if (length < sizeof sizes) {
            char caller[256];
            describe_code_address(object->caller, caller, sizeof caller);
            int written = snprintf(sizes + length, sizeof sizes - length, "%s%zu bytes from neuron_hbm_allocate%s",
                                   count > 1 ? ", " : "", object->bytes, caller);
            length += written > 0 ? static_cast<size_t>(written) : 0;
        }
        free_allocation(*object);
    }
    if (count)
        warning("%d HBM allocation%s made during the op %s not freed by its end: %s; the emulator frees them (its "
                "HBM scratch is per op: %zu bytes per core)", count, count == 1 ? "" : "s",
                count == 1 ? "was" : "were", sizes, hbm_scratch_limit);
    forget_objects();
}

void hbm_release_run()
{
    windows_end_run(false);
    for (const auto &object : hbm.objects)
        if (!object->tensor && !object->freed)
            free_allocation(*object);
    forget_objects();
}

void *q7_element(uint64_t hbm_addr, const void *ctx_ptr, bool is_nullptr, int64_t index, size_t size)
{
    if (!current_call())
        violation("Q7PtrType::operator[] used outside an op");
    if (is_nullptr)
        violation("Q7PtrType::operator[]: the Q7PtrType is null (is_nullptr: its tensor has no data)");
    check_context("Q7PtrType::operator[]", ctx_ptr);
    uint64_t address = hbm_addr + static_cast<uint64_t>(index) * size;
    const HbmObject *object = hbm_find(address, false);
    if (!object || size > object->bytes - (address - object->address))
        violation("Q7PtrType::operator[]: element %lld of %zu bytes is at %s", static_cast<long long>(index), size,
                  hbm_describe_position(object ? object->address + object->bytes : address).c_str());
    if (object->freed)
        violation("Q7PtrType::operator[]: element %lld is in %s", static_cast<long long>(index),
                  hbm_describe_object(*object).c_str());
    windows_translation_taken();
    char *element = object->memory + (address - object->address);
    element_writes_counted++;
    const TensorImpl *tensor = object->tensor.get();
    if (tensor && tensor->tracks_writes) {
        PendingWrites &pending = pending_writes;
        if (pending.tensor == tensor && element == pending.end)
            pending.end = element + size;
        else if (pending.tensor != tensor || element + size != pending.end)
            record_element_write(*tensor, element, size);
    }
    return element;
}

} // namespace neuron_host

using namespace neuron_host;

c10::Q7PtrType at::Tensor::q7_data_ptr() const
{
    std::shared_ptr<const TensorImpl> tensor = TensorInternals::shared(*this);
    if (!current_call())
        violation("q7_data_ptr() called outside an op");
    void *ctx = neuron_translate_ctx();
    size_t bytes = tensor->byte_size();
    if (bytes == 0)
        return c10::Q7PtrType{0, ctx, true};
    for (const auto &object : hbm.objects)
        if (object->tensor && object->memory == tensor->data && object->bytes == bytes)
            return c10::Q7PtrType{object->address, ctx, false};
    HbmObject &object = add_object(bytes, 64);
    object.memory = static_cast<char *>(tensor->data);
    object.tensor = std::move(tensor);
    return c10::Q7PtrType{object.address, ctx, false};
}

int neuron_hbm_allocate(unsigned size, uint64_t *out, unsigned align)
{
    if (!current_call())
        violation("neuron_hbm_allocate called outside an op");
    if (!out)
        violation("neuron_hbm_allocate: out is NULL: pass the address of the HBM address to set");
    if (align & (align - 1))
        violation("neuron_hbm_allocate: an alignment of %u bytes: it must be a power of two", align);
    if (size > hbm_scratch_limit - hbm.scratch_in_use) {
        warning("neuron_hbm_allocate: %u bytes: the op's HBM scratch holds %zu bytes per core on the emulator, and "
                "%zu are allocated; it returns -1", size, hbm_scratch_limit, hbm.scratch_in_use);
        return -1;
    }
    char *memory = static_cast<char *>(malloc(size ? size : 1));
    if (!memory)
        return -1;
    fill_with_pattern(memory, memory + size);
    HbmObject &object = add_object(size, align ? align : 1);
    object.memory = memory;
    object.caller = __builtin_return_address(0);
    hbm.scratch_in_use += size;
    *out = object.address;
    return 0;
}

void neuron_hbm_deallocate(uint64_t hbm_addr)
{
    if (!current_call())
        violation("neuron_hbm_deallocate called outside an op");
    for (const auto &object : hbm.objects) {
        if (object->address != hbm_addr || object->tensor)
            continue;
        if (object->freed)
            violation("neuron_hbm_deallocate: a double free: %s", hbm_describe_object(*object).c_str());
        free_allocation(*object);
        return;
    }
    violation("neuron_hbm_deallocate: 0x%llx is not an address neuron_hbm_allocate returned: it is %s",
              static_cast<unsigned long long>(hbm_addr), hbm_describe_position(hbm_addr).c_str());
}

int neuron_hbm_get_alloc_size(uint64_t hbm_addr, unsigned *size)
{
    if (!size)
        violation("neuron_hbm_get_alloc_size: size is NULL: pass the address of the size to set");
    for (const auto &object : hbm.objects) {
        if (object->address == hbm_addr && !object->tensor && !object->freed) {
            *size = static_cast<unsigned>(object->bytes);
            return 0;
        }
    }
    return -1;
}

void neuron_memcpy(void *dst_local, uint64_t src_hbm, uint32_t bytes)
{
    copy(dst_local, src_hbm, bytes, true);
}

void neuron_memcpy(uint64_t dst_hbm, void *src_local, uint32_t bytes)
{
    copy(src_local, dst_hbm, bytes, false);
}
