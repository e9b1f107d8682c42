/* mischief.cpp - kernels that misbehave on purpose, for the runner library's tests.
 *
 * Schemas (one library, built single-core and multicore):
 *   relu(Tensor x) -> Tensor                 each core its share, through TCM
 *   mischief(Tensor x, int how, int core) -> Tensor
 *       relu, and on core `core` (every core when -1) the mischief `how`;
 *       how 10 reads `core` as a thread id instead (see there); how + 100:
 *       every core sleeps 20 ms first, so that the runner shares the op
 *       with its workers
 *   chatter(Tensor x, int bytes) -> Tensor
 *       relu; each core prints "core N\n", then `bytes` bytes "0123456789" ...
 *   warn(Tensor x) -> Tensor                 relu, and three warnings (one twice)
 *   alias_probe(Tensor x) -> Tensor          core 0: out[0] = 7, then out[1] = x[0]:
 *       when out and x are the same memory, out[1] is 7 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <cstdlib>
#include <stdexcept>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <torch/torch.h>
#include "neuron/host/violation.h"
#include "neuron/host_abi.h"
#include "neuron/neuron-utils.hpp"

namespace {

// Tells a test that waits for it (a pipe's write end in
// $MISCHIEF_STARTED_FD) that the kernel is about to loop or block for ever:
// a signal the test sends then finds the call in progress.
void announce_started()
{
    const char *descriptor = getenv("MISCHIEF_STARTED_FD");
    char byte = 1;
    if (descriptor && write(atoi(descriptor), &byte, 1) != 1)
        perror("mischief: MISCHIEF_STARTED_FD");
}

torch::Tensor relu_share(const torch::Tensor &x)
{
    const size_t chunk = 256;
    size_t count = x.numel();
    // get_cpu_count() is 8 in a single-core build too.
    size_t cpu = get_cpu_id(), cpus = customop_host_linked_core() < 0 ? 1 : get_cpu_count();
    size_t begin = count * cpu / cpus, end = count * (cpu + 1) / cpus;
    torch::Tensor out = get_dst_tensor();
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    auto in = x.tcm_accessor();
    auto to = out.tcm_accessor();
    for (size_t i = begin; i < end; i += chunk) {
        size_t n = end - i < chunk ? end - i : chunk;
        in.tensor_to_tcm<float>(buffer, i, n);
        for (size_t j = 0; j < n; j++)
            buffer[j] = buffer[j] > 0.0f ? buffer[j] : 0.0f;
        to.tcm_to_tensor<float>(buffer, i, n);
    }
    torch::neuron::tcm_free(buffer);
    return out;
}

volatile int zero = 0, seven = 7;
int *volatile wild = reinterpret_cast<int *>(16);

void *nothing(void *)
{
    return nullptr;
}

void on_signal(int)
{
}

// Recursion with a frame of 1 KiB that the compiler cannot fold away.
volatile int bottom = -1;

__attribute__((noinline)) int deep(int level)
{
    volatile char frame[1024];
    frame[0] = static_cast<char>(level);
    return level == bottom ? 0 : deep(level + 1) + frame[0];
}

// Blocks SIGURG as a kernel cannot through the C library, and sleeps.
[[noreturn]] void sleep_for_ever_unstoppable()
{
    unsigned long urgent = 1ul << (SIGURG - 1);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &urgent, nullptr, sizeof urgent);
    for (;;) {
        struct timespec second = {1, 0};
        nanosleep(&second, nullptr);
    }
}

} // namespace

torch::Tensor relu(const torch::Tensor &x)
{
    return relu_share(x);
}

torch::Tensor mischief(const torch::Tensor &x, int how, int core)
{
    if (how >= 100) {
        struct timespec twenty = {0, 20000000};
        nanosleep(&twenty, nullptr);
        how -= 100;
    }
    torch::Tensor out = relu_share(x);
    if (how == 10) {
        // On the thread whose id is `core` (the caller's), the share is
        // marked with 100 and the kernel returns after 0.3 s; on any other,
        // it blocks SIGURG and never returns: it cannot be stopped.
        if (syscall(SYS_gettid) != core)
            sleep_for_ever_unstoppable();
        float hundred = 100;
        size_t begin = x.numel() * get_cpu_id() / get_cpu_count();
        out.tcm_accessor().tcm_to_tensor<float>(&hundred, begin, 1);
        struct timespec pause_time = {0, 300000000};
        nanosleep(&pause_time, nullptr);
        return out;
    }
    if (how == 30 && syscall(SYS_gettid) == core) {
        // On the thread whose id is `core` (the caller's), the kernel takes
        // 0.3 s, so that other threads take the other cores; on any other,
        // it blocks SIGURG, so it cannot be stopped, and writes 2, 3, 4 ...
        // into the first element of its share for ever.
        struct timespec pause_time = {0, 300000000};
        nanosleep(&pause_time, nullptr);
        return out;
    }
    if (how == 30) {
        unsigned long urgent = 1ul << (SIGURG - 1);
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &urgent, nullptr, sizeof urgent);
        float *value = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float)));
        size_t begin = x.numel() * get_cpu_id() / get_cpu_count();
        auto to = out.tcm_accessor();
        for (*value = 2;; *value += 1)
            to.tcm_to_tensor<float>(value, begin, 1);
    }
    if (core >= 0 && static_cast<uint32_t>(core) != get_cpu_id())
        return out;
    switch (how) {
    case 1: // a wild pointer
        *wild = 1;
        break;
    case 2:
        abort();
    case 3:
        throw std::runtime_error("the kernel gave up");
    case 4:
        throw 42;
    case 5: // a loop that never ends
        announce_started();
        for (;;)
            __asm__ __volatile__("");
    case 6: // blocked in a system call
        announce_started();
        for (;;)
            pause();
    case 7:
        __builtin_trap();
    case 8:
        printf("%d\n", seven / zero);
        break;
    case 9: // TCM held when the op is abandoned
        if (!torch::neuron::tcm_malloc(12 * 1024))
            printf("no TCM\n");
        *wild = 1;
        break;
    case 11: // prints, then faults
        printf("core %u was here\n", static_cast<unsigned>(get_cpu_id()));
        *wild = 1;
        break;
    case 12: // prints, then never returns
        printf("core %u is stuck\n", static_cast<unsigned>(get_cpu_id()));
        for (;;)
            pause();
    case 13:
        exit(0);
    case 14:
        exit(3);
    case 15:
        _exit(0);
    case 16:
        _Exit(0);
    case 17:
        quick_exit(0);
    case 18:
        if (fork() == 0)
            printf("the child of core %u runs on\n", static_cast<unsigned>(get_cpu_id()));
        break;
    case 19:
        std::exit(0);
    case 20:
        pthread_exit(nullptr);
    case 21: {
        pthread_t thread;
        if (pthread_create(&thread, nullptr, nothing, nullptr) == 0)
            pthread_detach(thread);
        break;
    }
    case 22: { // blocks SIGURG, to be left running at a time limit
        sigset_t urgent;
        sigemptyset(&urgent);
        sigaddset(&urgent, SIGURG);
        sigprocmask(SIG_BLOCK, &urgent, nullptr);
        for (;;)
            __asm__ __volatile__("");
    }
    case 23: {
        struct sigaction action = {};
        action.sa_handler = on_signal;
        sigaction(SIGSEGV, &action, nullptr);
        break;
    }
    case 24:
        signal(SIGINT, SIG_IGN);
        break;
    case 25: { // blocks SIGUSR1, reads the mask and SIGINT's disposition: allowed
        sigset_t user, now;
        sigemptyset(&user);
        sigaddset(&user, SIGUSR1);
        struct sigaction interrupt;
        if (pthread_sigmask(SIG_BLOCK, &user, nullptr) != 0 ||
            sigprocmask(SIG_BLOCK, nullptr, &now) != 0 || !sigismember(&now, SIGUSR1) ||
            sigaction(SIGINT, nullptr, &interrupt) != 0)
            printf("the mask or the disposition could not be read\n");
        break;
    }
    case 32: // holds SIGUSR2 and lets SIGUSR1 through, then throws: a violation
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        if (sighold(SIGUSR2) != 0 || sigrelse(SIGUSR1) != 0)
            printf("sighold or sigrelse failed\n");
#pragma GCC diagnostic pop
        throw std::runtime_error("the kernel gave up");
    case 27: { // takes 20 ms
        struct timespec twenty = {0, 20000000};
        nanosleep(&twenty, nullptr);
        break;
    }
    case 30 + 1: { // takes 1 s
        struct timespec second = {1, 0};
        nanosleep(&second, nullptr);
        break;
    }
    case 29:
        neuron_host::warning("core %u warns", static_cast<unsigned>(get_cpu_id()));
        break;
    case 28: // a stack overflow: recursion without end
        printf("%d\n", deep(1));
        break;
    case 26: {
        sigset_t interrupt;
        sigemptyset(&interrupt);
        sigaddset(&interrupt, SIGINT);
        int number;
        sigwait(&interrupt, &number);
        break;
    }
    default:
        break;
    }
    return out;
}

torch::Tensor chatter(const torch::Tensor &x, int bytes)
{
    printf("core %u\n", static_cast<unsigned>(get_cpu_id()));
    for (int i = 0; i < bytes; i++)
        putchar('0' + i % 10);
    return relu_share(x);
}

torch::Tensor warn(const torch::Tensor &x)
{
    neuron_host::warning("the first warning");
    neuron_host::warning("the first warning");
    neuron_host::warning("the second warning, %d", 2);
    return relu_share(x);
}

torch::Tensor alias_probe(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    if (get_cpu_id() != 0)
        return out;
    float *value = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float)));
    *value = 7;
    out.tcm_accessor().tcm_to_tensor<float>(value, 0, 1);
    x.tcm_accessor().tensor_to_tcm<float>(value, 0, 1);
    out.tcm_accessor().tcm_to_tensor<float>(value, 1, 1);
    torch::neuron::tcm_free(value);
    return out;
}
