/* windows.cpp - neuron_translate's translation windows (custom_op.h).
 *
 * On the device neuron_translate maps an HBM address into one of a few
 * windows of the core's address space and returns a local pointer into it,
 * valid until the window is remapped (the library's rule: until the next
 * neuron_translate call).  The emulator models window_count windows taken
 * round-robin, by each neuron_translate and each Q7PtrType::operator[] (which
 * translates on the device too).  The number and size of the device's
 * windows are not known; the emulator's map, from the page of the translated
 * address, window_limit bytes of its tensor or allocation (or up to its
 * end).
 *
 * A window is a copy, at an address of its own: a pointer kept after the
 * window was remapped points into pages no access may touch (as do the
 * guard pages before and after each window), so its use
 * stops the op (at the access with the access checks, else at the fault,
 * described by windows_describe_fault), as it would read whatever the
 * window maps next on the device.  Window addresses come round-robin from a
 * reserved area, so they are reused only after area_size bytes of windows.
 *
 * The copy is made page by page as the kernel touches it when its code has
 * the access checks (which tell each access before it happens), or whole at
 * neuron_translate when it has not (an AddressSanitizer build, a compiler
 * without the checks).  Beside each page a snapshot of what it was given
 * is kept, and what the kernel changed (the bytes that differ from the
 * snapshot) is written back to the tensor when the window is remapped, at
 * the end of the op, and before the runtime reads or writes that memory
 * itself (neuron_memcpy, the TCM accessor's copies, element-wise ops and
 * fill_, the copy of a returned tensor): so other cores' writes to other
 * parts of the same tensor are never overwritten with a stale copy.  After
 * the runtime wrote the memory, the pages of windows onto it are copied
 * again.  The element and stream accessors reach tensor memory directly,
 * and see a window's changes only once they are written back.
 *
 * The core ledger learns of each access through a window from the access
 * checks, as an element access (reads and writes of the output's elements
 * included), and of the bytes that changed when they are written back
 * (which is all it learns of code without the checks). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "custom_op.h"
#include "neuron/host/ledger.h"
#include "neuron/host/violation.h"
#include "hbm.h"
#include "ledger.h"
#include "runtime.h"
#include "tcm_poison.h"

namespace neuron_host {
namespace {

const int window_count = 4;
const size_t window_limit = 1u << 20;
const size_t area_size = 64u << 20; // the windows; their snapshots follow
const int history_size = 64;
const size_t bitmap_words = 8; // pages of a window, for pages of 4 KiB or more

struct Window {
    bool live;
    bool lazy;                // copied page by page as the kernel touches it
    uint64_t serial;          // the translation that made it (from 1 in each op)
    const HbmObject *object;
    uint64_t hbm_begin;       // the first HBM address it maps
    size_t bytes;             // how many it maps
    char *begin;              // where hbm_begin is
    size_t pages;             // its data pages, between two guard pages
    uint64_t copied[bitmap_words];
};

// A window remapped during the op, for the message about a pointer into it.
struct Remapped {
    char *begin;              // its first data page
    char *end;                // past its guard page after them
    uint64_t serial;
    uint64_t hbm_begin;
    const HbmObject *object;
};

struct WindowState {
    char *area;               // NULL until the first window
    size_t page;
    size_t next;              // offset of the next window in the area
    uint64_t translations;    // in the op in progress
    Window windows[window_count];
    Remapped history[history_size];
    int history_count;
};

WindowState state;
// What neuron_translate_ctx() returns: this core's context.
char context;

bool copied(const Window &window, size_t page)
{
    return (window.copied[page / 64] >> (page % 64)) & 1;
}

char *snapshot_of(const char *address)
{
    return const_cast<char *>(address) + area_size;
}

// The tensor's or allocation's memory that window's byte at offset stands for.
char *memory_at(const Window &window, size_t offset)
{
    return window.object->memory + (window.hbm_begin - window.object->address) + offset;
}

// The bytes of page (counted in window) that the window maps.
size_t page_bytes(const Window &window, size_t page)
{
    size_t from = page * state.page;
    return window.bytes - from < state.page ? window.bytes - from : state.page;
}

void copy_page(Window &window, size_t page)
{
    RuntimeCopy runtime;
    char *at = window.begin + page * state.page;
    if (mprotect(at, state.page, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(snapshot_of(at), state.page, PROT_READ | PROT_WRITE) != 0)
        violation("neuron_translate: cannot map the emulated translation window's pages");
    size_t bytes = page_bytes(window, page);
    // Past the window's bytes, the pattern; with AddressSanitizer, poisoned.
    tcm_unpoison(at, bytes);
    memcpy(at, memory_at(window, page * state.page), bytes);
    fill_with_pattern(at + bytes, at + state.page);
    tcm_poison(at + bytes, state.page - bytes);
    memcpy(snapshot_of(at), at, bytes);
    window.copied[page / 64] |= uint64_t(1) << (page % 64);
}

// Writes what the kernel changed in window's copied pages back to the
// memory, tells the ledger of those bytes, and takes them as the new
// snapshot.
void write_back(Window &window)
{
    RuntimeCopy runtime;
    for (size_t page = 0; page < window.pages; page++) {
        if (!copied(window, page))
            continue;
        char *at = window.begin + page * state.page;
        char *snapshot = snapshot_of(at);
        size_t bytes = page_bytes(window, page);
        for (size_t i = 0; i < bytes;) {
            if (at[i] == snapshot[i]) {
                i++;
                continue;
            }
            size_t end = i;
            while (end < bytes && at[end] != snapshot[end])
                end++;
            char *memory = memory_at(window, page * state.page + i);
            memcpy(memory, at + i, end - i);
            memcpy(snapshot + i, at + i, end - i);
            // The access checks recorded the kernel's own stores; a library
            // function's (qsort on a window, say) show here.
            if (window.object->tensor)
                ledger_write(*window.object->tensor, memory, end - i);
            i = end;
        }
    }
}

// Ends window: its pages go back to no access (and their memory to the
// system); write_back first when the kernel's changes are to be kept.
void remap(Window &window, bool keep_changes)
{
    if (!window.live)
        return;
    if (keep_changes)
        write_back(window);
    // The pages copied in go back to no access (a window nothing touched
    // costs no system call).
    size_t first = window.pages, last = 0;
    for (size_t page = 0; page < window.pages; page++) {
        if (copied(window, page)) {
            first = page < first ? page : first;
            last = page;
        }
    }
    if (first <= last) {
        char *from = window.begin + first * state.page;
        size_t length = (last + 1 - first) * state.page;
        mprotect(from, length, PROT_NONE);
        mprotect(snapshot_of(from), length, PROT_NONE);
        madvise(from, length, MADV_DONTNEED);
        madvise(snapshot_of(from), length, MADV_DONTNEED);
    }
    size_t size = window.pages * state.page;
    Remapped &kept = state.history[state.history_count % history_size];
    kept = Remapped{window.begin, window.begin + size + state.page, window.serial, window.hbm_begin, window.object};
    state.history_count++;
    window.live = false;
}

void reserve_area()
{
    state.page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *area = mmap(nullptr, 2 * area_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        violation("neuron_translate: cannot reserve %zu bytes of address space for the emulated translation windows",
                  2 * area_size);
    state.area = static_cast<char *>(area);
    managed_range_set(managed_windows, state.area, 2 * area_size);
}

// The first data page of a window of pages data pages between two guard
// pages; the windows remapped there before are forgotten.
char *place(size_t pages)
{
    size_t size = (pages + 2) * state.page;
    if (state.next + size > area_size)
        state.next = 0;
    char *start = state.area + state.next;
    state.next += size;
    for (int i = 0; i < history_size && i < state.history_count; i++) {
        Remapped &old = state.history[i];
        if (old.begin - state.page < start + size && start < old.end)
            old.begin = old.end = nullptr;
    }
    return start + state.page;
}

// "byte 16 of argument 1 (Tensor x)" for the HBM address a window address stands for.
std::string position(const HbmObject &object, uint64_t hbm_address)
{
    return "byte " + hbm_offset_text(object, hbm_address) + " of " + hbm_describe_object(object);
}

// Where a window address lies, as messages say it; access is "f() read 4
// bytes" or "a read or write".
std::string describe(const char *address, const char *access)
{
    for (const Window &window : state.windows) {
        if (!window.live || address < window.begin - state.page ||
            address >= window.begin + (window.pages + 1) * state.page)
            continue;
        const HbmObject &object = *window.object;
        uint64_t hbm_address = window.hbm_begin + static_cast<uint64_t>(address - window.begin);
        std::string where = position(object, hbm_address);
        if (address < window.begin && hbm_address < object.address)
            return std::string(access) + " at " + where + ", before its start, through a pointer neuron_translate " +
                   "returned (on the device it reaches whatever precedes it in HBM)";
        if (address >= window.begin && address < window.begin + window.bytes)
            return std::string(access) + " at " + where + " through a pointer neuron_translate returned, by code " +
                   "without the runtime's access checks (a library function, say), before the window's page was " +
                   "copied in: give such code a data RAM copy (neuron_memcpy), or compile it with the access checks";
        if (address < window.begin)
            return std::string(access) + " at " + where + ", before the part of it that its translation window " +
                   "maps (the emulator's windows map from the page of the translated address, " +
                   position(object, window.hbm_begin) + "): translate the lower address";
        if (hbm_address - object.address >= object.bytes)
            return std::string(access) + " at " + where + ", past its end (it holds " + std::to_string(object.bytes) +
                   " bytes), through a pointer neuron_translate returned (on the device it reaches whatever follows " +
                   "it in HBM)";
        return std::string(access) + " at " + where + ", past the " + std::to_string(window_limit) +
               " bytes that its translation window maps from " + position(object, window.hbm_begin) +
               " (the emulator's windows map " + std::to_string(window_limit) + " bytes from the page of the " +
               "translated address): translate the address of the rest";
    }
    for (int i = 0; i < history_size && i < state.history_count; i++) {
        const Remapped &old = state.history[i];
        if (!old.begin || address < old.begin - state.page || address >= old.end)
            continue;
        uint64_t hbm_address = old.hbm_begin + static_cast<uint64_t>(address - old.begin);
        return std::string(access) + " through a pointer that neuron_translate returned for " +
               position(*old.object, hbm_address) + ", after its window was remapped (" +
               std::to_string(window_count) + " translations later: the emulator takes its " +
               std::to_string(window_count) + " windows round-robin, at each neuron_translate and each " +
               "Q7PtrType::operator[]; on the device the pointer reaches whatever the window maps now): a " +
               "translated pointer is valid until the next translation; translate the address again";
    }
    return std::string(access) + " in the emulated translation windows' area, outside any window (on the device it " +
           "reaches whatever is mapped there)";
}

// Whether window is live and maps some of [memory, memory + bytes).
bool maps(const Window &window, const void *memory, size_t bytes)
{
    const char *from = static_cast<const char *>(memory);
    const char *begin = window.live ? memory_at(window, 0) : nullptr;
    return begin && begin < from + bytes && from < begin + window.bytes;
}

void start_run()
{
    if (!state.area)
        reserve_area();
}

} // namespace

void *translate(void *ctx, uint64_t hbm_addr, bool checked)
{
    if (!current_call())
        violation("neuron_translate called outside an op");
    if (ctx != &context)
        violation("neuron_translate: the context %p is not the one neuron_translate_ctx() returns on this core", ctx);
    const HbmObject *object = hbm_find(hbm_addr, true);
    if (!object)
        violation("neuron_translate: 0x%llx is %s", static_cast<unsigned long long>(hbm_addr),
                  hbm_describe_position(hbm_addr).c_str());
    if (object->freed)
        violation("neuron_translate: 0x%llx is in %s", static_cast<unsigned long long>(hbm_addr),
                  hbm_describe_object(*object).c_str());
    start_run();
    Window &window = state.windows[state.translations % window_count];
    remap(window, true);
    state.translations++;
    size_t offset = hbm_addr - object->address;
    size_t from = offset / state.page * state.page;
    size_t bytes = object->bytes - from < window_limit ? object->bytes - from : window_limit;
    window = Window();
    window.live = true;
#ifdef CUSTOMOP_HOST_ASAN
    (void)checked; // the kernel's checks are AddressSanitizer's, which tell the runtime nothing
    window.lazy = false;
#else
    window.lazy = checked;
#endif
    window.serial = state.translations;
    window.object = object;
    window.hbm_begin = object->address + from;
    window.bytes = bytes;
    window.pages = (bytes + state.page - 1) / state.page;
    window.begin = place(window.pages);
    if (!window.lazy)
        for (size_t page = 0; page < window.pages; page++)
            copy_page(window, page);
    return window.begin + (offset - from);
}

void windows_translation_taken()
{
    if (!state.area)
        return;
    remap(state.windows[state.translations % window_count], true);
    state.translations++;
}

void windows_check_access(const char *address, size_t size, bool writes, const void *code)
{
    for (Window &window : state.windows) {
        if (!window.live || address < window.begin || address >= window.begin + window.bytes ||
            size > static_cast<size_t>(window.begin + window.bytes - address))
            continue;
        size_t first = static_cast<size_t>(address - window.begin) / state.page;
        size_t last = static_cast<size_t>(address + size - 1 - window.begin) / state.page;
        for (size_t page = first; size && page <= last; page++)
            if (!copied(window, page))
                copy_page(window, page);
        const TensorImpl *tensor = window.object->tensor.get();
        char *memory = memory_at(window, static_cast<size_t>(address - window.begin));
        if (writes) {
            element_writes_counted++;
            if (tensor && tensor->tracks_writes)
                record_element_write(*tensor, memory, size);
        } else {
            element_reads_counted++;
            if (tensor)
                ledger_read(*tensor, memory, size);
        }
        return;
    }
    char access[384];
    describe_access(writes, size, code, access, sizeof access);
    // An access that starts inside a window is described where it leaves it.
    for (const Window &window : state.windows)
        if (window.live && address >= window.begin && address < window.begin + window.bytes)
            address = window.begin + window.bytes;
    violation("%s", describe(address, access).c_str());
}

int windows_describe_fault(const void *address, char *text, size_t size)
{
    const char *at = static_cast<const char *>(address);
    if (!state.area || at < state.area || at >= state.area + 2 * area_size)
        return 0;
    snprintf(text, size, "%s", describe(at, "a read or write").c_str());
    return 1;
}

void windows_sync(const void *memory, size_t bytes)
{
    for (Window &window : state.windows)
        if (maps(window, memory, bytes))
            write_back(window);
}

void windows_refresh(const void *memory, size_t bytes)
{
    for (Window &window : state.windows)
        for (size_t page = 0; maps(window, memory, bytes) && page < window.pages; page++)
            if (copied(window, page))
                copy_page(window, page);
}

void windows_forget(const HbmObject &object)
{
    for (Window &window : state.windows)
        if (window.live && window.object == &object)
            remap(window, false);
}

void windows_end_run(bool keep_changes)
{
    for (Window &window : state.windows)
        remap(window, keep_changes);
    state.translations = 0;
    state.history_count = 0;
}

} // namespace neuron_host

void *neuron_translate_ctx()
{
    return &neuron_host::context;
}

// When the library is unloaded: the reserved area.
__attribute__((destructor)) static void unmap_window_area()
{
    if (neuron_host::state.area && !neuron_host::current_call())
        munmap(neuron_host::state.area, 2 * neuron_host::area_size);
}
