/* signals.cpp - a kernel's changes to the process's signal handling.
 *
 * The device has no signals.  On the host the runner needs some to stop
 * and report a kernel: the fault signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT), SIGURG (which stops a kernel at a time limit) and SIGINT
 * (Ctrl-C).  A kernel that blocked SIGURG on the caller's thread could
 * never be stopped, and the call would never return; one that changed a
 * disposition would change the whole program's handling of that signal,
 * beyond the op, with a handler perhaps in its own library, which is
 * unloaded at rco_close.  So these are violations naming the core, the op
 * and the call:
 *   - changing a disposition: sigaction() with a new action, signal(),
 *     sigset(), sigignore(), siginterrupt(), bsd_signal(), sysv_signal();
 *   - blocking one of those signals: sigprocmask(), pthread_sigmask(),
 *     sighold(), or waiting with it blocked, sigsuspend();
 *   - taking one of them: sigwait(), sigwaitinfo(), sigtimedwait().
 * Reading a disposition or the mask, and blocking other signals (the mask
 * goes back when the kernel returns: the mask before the first change of
 * the call is kept here, and put back when the call ends), go on to the C
 * library's functions,
 * as does any call made outside an op (a static constructor's, say).  As in
 * process.cpp, the kernel's calls bind to these, inside its library. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>

#include "neuron/host/violation.h"
#include "runtime.h"

namespace {

const int runner_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGURG, SIGINT};

const char *signal_name(int number)
{
    switch (number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGURG: return "SIGURG";
    case SIGINT: return "SIGINT";
    default: return nullptr;
    }
}

// The first of the runner's signals in set, or 0.
int runner_signal_in(const sigset_t *set)
{
    for (int number : runner_signals)
        if (sigismember(set, number) == 1)
            return number;
    return 0;
}

[[noreturn]] void refuse_disposition(const char *function, int number)
{
    const char *name = signal_name(number);
    char which[32];
    if (name)
        snprintf(which, sizeof which, "%s", name);
    else
        snprintf(which, sizeof which, "signal %d", number);
    neuron_host::violation("the kernel called %s() for %s, which changes how the whole program handles "
                           "that signal, beyond the op; the device has no signals", function, which);
}

[[noreturn]] void refuse_runner_signal(const char *function, const char *what, int number)
{
    neuron_host::violation("the kernel called %s() to %s %s; the device has no signals, and on the "
                           "host the runner needs SIGURG, SIGINT and the fault signals to stop and "
                           "report a kernel", function, what, signal_name(number));
}

// Outside an op nothing is guarded (see runcustomop.h).  (sigsuspend() and
// the sigwait() family are cancellation points: C++ declares them without
// noexcept.)
bool in_op()
{
    return neuron_host::current_call() != nullptr;
}

// The C library's functions, looked up when the library is loaded: a
// kernel's stack is small, and the lookup is not.
using sigaction_function = int (*)(int, const struct sigaction *, struct sigaction *);
using mask_function = int (*)(int, const sigset_t *, sigset_t *);
using handler_function = sighandler_t (*)(int, sighandler_t);
using one_signal_function = int (*)(int);
using set_function = int (*)(const sigset_t *);
using wait_function = int (*)(const sigset_t *, int *);
using waitinfo_function = int (*)(const sigset_t *, siginfo_t *);
using timedwait_function = int (*)(const sigset_t *, siginfo_t *, const struct timespec *);
using interrupt_function = int (*)(int, int);

struct Library {
    sigaction_function sigaction;
    mask_function sigprocmask;
    mask_function pthread_sigmask;
    handler_function signal;
    handler_function sigset;
    handler_function bsd_signal;
    handler_function sysv_signal;
    one_signal_function sighold;
    one_signal_function sigrelse;
    one_signal_function sigignore;
    interrupt_function siginterrupt;
    set_function sigsuspend;
    wait_function sigwait;
    waitinfo_function sigwaitinfo;
    timedwait_function sigtimedwait;
};

Library library;

template <typename Function> void look_up(Function *function, const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    *function = reinterpret_cast<Function>(symbol);
}

__attribute__((constructor)) void look_up_library()
{
    look_up(&library.sigaction, "sigaction");
    look_up(&library.sigprocmask, "sigprocmask");
    look_up(&library.pthread_sigmask, "pthread_sigmask");
    look_up(&library.signal, "signal");
    look_up(&library.sigset, "sigset");
    look_up(&library.bsd_signal, "bsd_signal");
    look_up(&library.sysv_signal, "sysv_signal");
    look_up(&library.sighold, "sighold");
    look_up(&library.sigrelse, "sigrelse");
    look_up(&library.sigignore, "sigignore");
    look_up(&library.siginterrupt, "siginterrupt");
    look_up(&library.sigsuspend, "sigsuspend");
    look_up(&library.sigwait, "sigwait");
    look_up(&library.sigwaitinfo, "sigwaitinfo");
    look_up(&library.sigtimedwait, "sigtimedwait");
}

// A function the C library does not have (or that was not found) fails as
// an unknown one would.
template <typename Function, typename Result, typename... Arguments>
Result forward(Function function, Result failed, Arguments... arguments)
{
    return function ? function(arguments...) : failed;
}

// The mask before the kernel's first change of it in this call.
struct KeptMask {
    bool kept;
    sigset_t mask;
};

KeptMask kept_mask;

// Before a change of the mask: the mask as it is, the first time in a call.
void keep_mask()
{
    if (in_op() && !kept_mask.kept && library.pthread_sigmask &&
        library.pthread_sigmask(SIG_BLOCK, nullptr, &kept_mask.mask) == 0)
        kept_mask.kept = true;
}

int change_mask(mask_function function, const char *name, int how, const sigset_t *set, sigset_t *previous)
{
    if (in_op() && set && (how == SIG_BLOCK || how == SIG_SETMASK)) {
        int number = runner_signal_in(set);
        if (number)
            refuse_runner_signal(name, "block", number);
    }
    if (set)
        keep_mask();
    return forward(function, -1, how, set, previous);
}

} // namespace

extern "C" {

int sigaction(int number, const struct sigaction *action, struct sigaction *previous) noexcept
{
    if (in_op() && action)
        refuse_disposition("sigaction", number);
    return forward(library.sigaction, -1, number, action, previous);
}

sighandler_t signal(int number, sighandler_t handler) noexcept
{
    if (in_op())
        refuse_disposition("signal", number);
    return forward(library.signal, SIG_ERR, number, handler);
}

sighandler_t sigset(int number, sighandler_t handler) noexcept
{
    if (in_op())
        refuse_disposition("sigset", number);
    return forward(library.sigset, SIG_ERR, number, handler);
}

sighandler_t bsd_signal(int number, sighandler_t handler) noexcept
{
    if (in_op())
        refuse_disposition("bsd_signal", number);
    return forward(library.bsd_signal, SIG_ERR, number, handler);
}

sighandler_t sysv_signal(int number, sighandler_t handler) noexcept
{
    if (in_op())
        refuse_disposition("sysv_signal", number);
    return forward(library.sysv_signal, SIG_ERR, number, handler);
}

int sigignore(int number) noexcept
{
    if (in_op())
        refuse_disposition("sigignore", number);
    return forward(library.sigignore, -1, number);
}

int siginterrupt(int number, int interrupt) noexcept
{
    if (in_op())
        refuse_disposition("siginterrupt", number);
    return forward(library.siginterrupt, -1, number, interrupt);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *previous) noexcept
{
    return change_mask(library.sigprocmask, "sigprocmask", how, set, previous);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *previous) noexcept
{
    return change_mask(library.pthread_sigmask, "pthread_sigmask", how, set, previous);
}

int sighold(int number) noexcept
{
    if (in_op() && signal_name(number))
        refuse_runner_signal("sighold", "block", number);
    keep_mask();
    return forward(library.sighold, -1, number);
}

int sigrelse(int number) noexcept
{
    keep_mask();
    return forward(library.sigrelse, -1, number);
}

int sigsuspend(const sigset_t *mask)
{
    if (in_op() && runner_signal_in(mask))
        refuse_runner_signal("sigsuspend", "wait with a mask that blocks", runner_signal_in(mask));
    return forward(library.sigsuspend, -1, mask);
}

int sigwait(const sigset_t *set, int *number)
{
    if (in_op() && runner_signal_in(set))
        refuse_runner_signal("sigwait", "take", runner_signal_in(set));
    return forward(library.sigwait, -1, set, number);
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    if (in_op() && runner_signal_in(set))
        refuse_runner_signal("sigwaitinfo", "take", runner_signal_in(set));
    return forward(library.sigwaitinfo, -1, set, info);
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    if (in_op() && runner_signal_in(set))
        refuse_runner_signal("sigtimedwait", "take", runner_signal_in(set));
    return forward(library.sigtimedwait, -1, set, info, timeout);
}

} // extern "C"

void neuron_host::signal_mask_restore()
{
    if (kept_mask.kept && library.pthread_sigmask)
        library.pthread_sigmask(SIG_SETMASK, &kept_mask.mask, nullptr);
    kept_mask.kept = false;
}

void neuron_host::signal_mask_forget()
{
    kept_mask.kept = false;
}
