/* sanitizer.h - what the runtime tells AddressSanitizer in the variant of
 * the host SDK built with it (lib/address/): each switch between the
 * caller's stack and the emulated stacks, so that ASan neither takes a
 * switch for a stack overflow nor warns about it, and the reports of each
 * call.  Without ASan every function here does nothing, and the plain
 * runtime is what it was. */
#ifndef CUSTOMOP_HOST_SANITIZER_H
#define CUSTOMOP_HOST_SANITIZER_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define CUSTOMOP_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUSTOMOP_HOST_ASAN 1
#endif
#endif

#ifdef CUSTOMOP_HOST_ASAN
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

#include "asan_reports.h"
#endif

namespace neuron_host {

// A stack as ASan is told of it.
struct FiberStack {
    const void *bottom;
    size_t size;
};

#ifdef CUSTOMOP_HOST_ASAN

// Room below each emulated stack (stacks.cpp): ASan's report runs on the
// stack of the access it reports, and its symbolizer needs tens of KiB; a
// fault there would leave ASan's locks held.  ASan's redzones also make
// frames bigger than the device's.  The emulated limit (STACK_SIZE and the
// core stack) still decides where the wrapper runs.
const size_t sanitizer_stack_room = 256 * 1024;

// An emulated stack with the room below it.
inline FiberStack fiber_stack(char *low, size_t size)
{
    return FiberStack{low - sanitizer_stack_room, size + sanitizer_stack_room};
}

// Before switching from this stack to stack; fake_stack keeps this stack's
// fake frames for fiber_arrive when it is switched back to, and is NULL
// when it never is (its frames are dropped).
inline void fiber_leave(void **fake_stack, FiberStack stack)
{
    __sanitizer_start_switch_fiber(fake_stack, stack.bottom, stack.size);
}

// First thing on a stack switched to (fake_stack: what fiber_leave kept).
inline void fiber_arrive(void *fake_stack)
{
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}

// The calling thread's own stack, where customop_host_run is called.
inline FiberStack thread_stack()
{
    static thread_local FiberStack stack;
    if (!stack.bottom) {
        pthread_attr_t attributes;
        void *bottom = nullptr;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
            pthread_attr_getstack(&attributes, &bottom, &size);
            pthread_attr_destroy(&attributes);
        }
        stack = FiberStack{bottom, size};
    }
    return stack;
}

// A stack about to be run from its top again: what earlier frames left
// poisoned there (redzones of frames a violation or a fault abandoned) goes.
inline void stack_unpoison(FiberStack stack)
{
    ASAN_UNPOISON_MEMORY_REGION(stack.bottom, stack.size);
}

// The reports of the call in progress on this thread go to sink.
inline void reports_watch(customop_host_report_sink *sink)
{
    sink->count = 0;
    sink->summary[0] = '\0';
    customop_host_reports_watch(sink);
}
// Stops watching; returns the number of reports the call made.
inline int reports_count(customop_host_report_sink *sink)
{
    customop_host_reports_watch(nullptr);
    return sink->count;
}

// The file ASan writes its reports into, or NULL for stderr (asan_reports.h).
inline const char *reports_file(int *users)
{
    return customop_host_reports_file(users);
}

#else

const size_t sanitizer_stack_room = 0;

inline FiberStack fiber_stack(char *low, size_t size) { return FiberStack{low, size}; }

struct customop_host_report_sink_none {
    char summary[1];
    int count;
};
using customop_host_report_sink = customop_host_report_sink_none;

inline void fiber_leave(void **, FiberStack) {}
inline void fiber_arrive(void *) {}
inline FiberStack thread_stack() { return FiberStack{nullptr, 0}; }
inline void stack_unpoison(FiberStack) {}
inline void reports_watch(customop_host_report_sink *) {}
inline int reports_count(customop_host_report_sink *) { return 0; }
inline const char *reports_file(int *users) { *users = 0; return nullptr; }

#endif

} // namespace neuron_host

#endif
