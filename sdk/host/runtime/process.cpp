/* process.cpp - a kernel's exit(), _exit(), _Exit(), quick_exit(), fork() and vfork().
 *
 * On the device a kernel cannot end the runtime or start processes; on the
 * host these would end the runner (or whatever program runs the op, a
 * Python process say), or leave a second one running.  So each is a
 * violation naming the core, the op and the call.  The runtime is compiled
 * with hidden visibility and linked into each core library, so a kernel's
 * calls bind to these, inside its library; the rest of the process keeps
 * libc's.  An archive member is linked when something refers to it: this
 * one comes in with the first kernel that calls one of them.  No libc
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

} // namespace

extern "C" {

[[noreturn]] void exit(int status) noexcept;
[[noreturn]] void _exit(int status) noexcept;
[[noreturn]] void _Exit(int status) noexcept;
[[noreturn]] void quick_exit(int status) noexcept;
pid_t fork() noexcept;
pid_t vfork() noexcept;

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

} // extern "C"
