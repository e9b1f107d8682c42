/* stacks.cpp - stacks with a guard region, announced to the runner so that
 * a fault in the guard is reported as that stack's overflow. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"
#include "sanitizer.h"

namespace neuron_host {
namespace {

// Large enough that a frame with big locals which jumps past the end of the
// stack still lands in the guard rather than in unrelated memory; it is
// address space only, never backed by memory.
const size_t guard_size = static_cast<size_t>(1024) * 1024;

size_t round_up(size_t value, size_t multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

} // namespace

bool guarded_stack_create(GuardedStack *stack, size_t size, const char *description)
{
    // The stack is exactly size bytes (to 16-byte alignment) from the guard
    // up; the rest of its last page lies above the top, unused.
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t usable = round_up(size < 16 ? 16 : size, 16);
    size_t total = guard_size + sanitizer_stack_room + round_up(usable, page);
    void *mapping = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED)
        return false;
    char *low = static_cast<char *>(mapping) + guard_size + sanitizer_stack_room;
    if (mprotect(low - sanitizer_stack_room, total - guard_size, PROT_READ | PROT_WRITE) != 0) {
        munmap(mapping, total);
        return false;
    }
    stack->mapping = static_cast<char *>(mapping);
    stack->mapping_size = total;
    stack->low = low;
    stack->size = usable;
    snprintf(stack->description, sizeof stack->description, "%s", description);
    customop_host_call *call = current_call();
    if (call && call->guard)
        call->guard(call->context, stack->mapping, guard_size, stack->description);
    return true;
}

void guarded_stack_destroy(GuardedStack *stack)
{
    if (!stack->mapping)
        return;
    customop_host_call *call = current_call();
    if (call && call->guard)
        call->guard(call->context, stack->mapping, guard_size, nullptr);
    munmap(stack->mapping, stack->mapping_size);
    memset(stack, 0, sizeof *stack);
}

} // namespace neuron_host
