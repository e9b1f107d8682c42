/* process.cpp - a kernel's exit(), _exit(), _Exit(), quick_exit(), fork(),
 * vfork(), and the threads it would start or end: pthread_create(),
 * pthread_exit(), pthread_cancel(), thrd_create(), thrd_exit().
 *
 * On the device a kernel cannot end the runtime, start processes or
 * threads; on the host these would end the runner (or whatever program
 * runs the op, a Python process say), leave a second one running, end the
 * thread that runs the core (the caller's own, often), or start a thread
 * that outlives the op and runs in a library that is unloaded later.  So
 * each is a violation naming the core, the op and the call.  The runtime is
 * compiled with hidden visibility and linked into each core library, so a
 * kernel's calls bind to these, inside its library; the rest of the process
 * keeps libc's.  An archive member is linked when something refers to it:
 * this one comes in with the first kernel that calls one of them.  No libc
 * header here: these definitions replace its declarations. */
#include <sys/types.h>

#include "neuron/host/violation.h"

namespace {

[[noreturn]] void refuse_exit(const char *function, int status)
{
    neuron_host::violation("the kernel called %s(%d), which would end the process on the host; a "
                           "kernel ends by returning its result", function, status);
}

[[noreturn]] void refuse_fork(const char *function)
{
    neuron_host::violation("the kernel called %s(), which the device does not have (on the host it "
                           "would leave a second process running the rest of the op)", function);
}

[[noreturn]] void refuse_thread(const char *function)
{
    neuron_host::violation("the kernel called %s(), which the device does not have (a core runs its "
                           "kernel on one thread; on the host a thread it starts would outlive the op)",
                           function);
}

[[noreturn]] void refuse_thread_end(const char *function)
{
    neuron_host::violation("the kernel called %s(), which would end the thread that runs the core on "
                           "the host; a kernel ends by returning its result", function);
}

} // namespace

extern "C" {

[[noreturn]] void exit(int status) noexcept;
[[noreturn]] void _exit(int status) noexcept;
// NOLINTNEXTLINE(bugprone-reserved-identifier): C's own _Exit, which kernels may call
[[noreturn]] void _Exit(int status) noexcept;
[[noreturn]] void quick_exit(int status) noexcept;
pid_t fork() noexcept;
pid_t vfork() noexcept;
int pthread_create(unsigned long *thread, const void *attributes, void *(*start)(void *),
                   void *argument) noexcept;
[[noreturn]] void pthread_exit(void *result) noexcept;
int pthread_cancel(unsigned long thread) noexcept;
int thrd_create(unsigned long *thread, int (*start)(void *), void *argument) noexcept;
[[noreturn]] void thrd_exit(int result) noexcept;

void exit(int status) noexcept
{
    refuse_exit("exit", status);
}

void _exit(int status) noexcept
{
    refuse_exit("_exit", status);
}

void _Exit(int status) noexcept
{
    refuse_exit("_Exit", status);
}

void quick_exit(int status) noexcept
{
    refuse_exit("quick_exit", status);
}

pid_t fork() noexcept
{
    refuse_fork("fork");
}

pid_t vfork() noexcept
{
    refuse_fork("vfork");
}

int pthread_create(unsigned long *, const void *, void *(*)(void *), void *) noexcept
{
    refuse_thread("pthread_create");
}

void pthread_exit(void *) noexcept
{
    refuse_thread_end("pthread_exit");
}

int pthread_cancel(unsigned long) noexcept
{
    neuron_host::violation("the kernel called pthread_cancel(), which the device does not have (on the "
                           "host it would end a thread of the program)");
}

int thrd_create(unsigned long *, int (*)(void *), void *) noexcept
{
    refuse_thread("thrd_create");
}

void thrd_exit(int) noexcept
{
    refuse_thread_end("thrd_exit");
}

} // extern "C"
