/* core_context.cpp - the stack switches of core_context.h. */
#include <stdint.h>
#include <string.h>

#include "core_context.h"
#include "sanitizer.h"

#ifdef CUSTOMOP_HOST_OWN_SWITCH

// customop_host_context_switch(saved, next): pushes the registers a call
// keeps and the floating-point control state on this stack, writes the
// stack pointer to *saved, takes next as the stack pointer, pops the same
// from there and returns to the address above them.  A stack that
// context_prepare made "returns" to customop_host_context_start, which
// calls the entry function it left in a kept register; its unwinding
// information ends the stack there, for gdb's backtraces and the unwinder.
extern "C" __attribute__((visibility("hidden"))) void customop_host_context_switch(void **saved, void *next);
extern "C" __attribute__((visibility("hidden"))) void customop_host_context_start();

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl customop_host_context_switch\n"
    ".hidden customop_host_context_switch\n"
    ".type customop_host_context_switch, @function\n"
    ".p2align 4\n"
    "customop_host_context_switch:\n"
    ".cfi_startproc\n"
    "pushq %rbp\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %rbp, 0\n"
    "pushq %rbx\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %rbx, 0\n"
    "pushq %r12\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %r12, 0\n"
    "pushq %r13\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %r13, 0\n"
    "pushq %r14\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %r14, 0\n"
    "pushq %r15\n"
    ".cfi_adjust_cfa_offset 8\n"
    ".cfi_rel_offset %r15, 0\n"
    "subq $8, %rsp\n"
    ".cfi_adjust_cfa_offset 8\n"
    "stmxcsr (%rsp)\n"
    "fnstcw 4(%rsp)\n"
    "movq %rsp, (%rdi)\n"
    "movq %rsi, %rsp\n"
    "ldmxcsr (%rsp)\n"
    "fldcw 4(%rsp)\n"
    "addq $8, %rsp\n"
    ".cfi_adjust_cfa_offset -8\n"
    "popq %r15\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %r15\n"
    "popq %r14\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %r14\n"
    "popq %r13\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %r13\n"
    "popq %r12\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %r12\n"
    "popq %rbx\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %rbx\n"
    "popq %rbp\n"
    ".cfi_adjust_cfa_offset -8\n"
    ".cfi_restore %rbp\n"
    "ret\n"
    ".cfi_endproc\n"
    ".size customop_host_context_switch, .-customop_host_context_switch\n"
    "\n"
    ".globl customop_host_context_start\n"
    ".hidden customop_host_context_start\n"
    ".type customop_host_context_start, @function\n"
    ".p2align 4\n"
    "customop_host_context_start:\n"
    ".cfi_startproc\n"
    ".cfi_undefined %rip\n"
    "callq *%rbx\n"
    "ud2\n"
    ".cfi_endproc\n"
    ".size customop_host_context_start, .-customop_host_context_start\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl customop_host_context_switch\n"
    ".hidden customop_host_context_switch\n"
    ".type customop_host_context_switch, %function\n"
    ".p2align 4\n"
    "customop_host_context_switch:\n"
    ".cfi_startproc\n"
    "sub sp, sp, #176\n"
    ".cfi_adjust_cfa_offset 176\n"
    "stp x19, x20, [sp, #0]\n"
    "stp x21, x22, [sp, #16]\n"
    "stp x23, x24, [sp, #32]\n"
    "stp x25, x26, [sp, #48]\n"
    "stp x27, x28, [sp, #64]\n"
    "stp x29, x30, [sp, #80]\n"
    ".cfi_rel_offset x29, 80\n"
    ".cfi_rel_offset x30, 88\n"
    "stp d8, d9, [sp, #96]\n"
    "stp d10, d11, [sp, #112]\n"
    "stp d12, d13, [sp, #128]\n"
    "stp d14, d15, [sp, #144]\n"
    "mrs x9, fpcr\n"
    "str x9, [sp, #160]\n"
    "mov x9, sp\n"
    "str x9, [x0]\n"
    "mov sp, x1\n"
    "ldr x9, [sp, #160]\n"
    "msr fpcr, x9\n"
    "ldp x19, x20, [sp, #0]\n"
    "ldp x21, x22, [sp, #16]\n"
    "ldp x23, x24, [sp, #32]\n"
    "ldp x25, x26, [sp, #48]\n"
    "ldp x27, x28, [sp, #64]\n"
    "ldp x29, x30, [sp, #80]\n"
    "ldp d8, d9, [sp, #96]\n"
    "ldp d10, d11, [sp, #112]\n"
    "ldp d12, d13, [sp, #128]\n"
    "ldp d14, d15, [sp, #144]\n"
    "add sp, sp, #176\n"
    ".cfi_adjust_cfa_offset -176\n"
    "ret\n"
    ".cfi_endproc\n"
    ".size customop_host_context_switch, .-customop_host_context_switch\n"
    "\n"
    ".globl customop_host_context_start\n"
    ".hidden customop_host_context_start\n"
    ".type customop_host_context_start, %function\n"
    ".p2align 4\n"
    "customop_host_context_start:\n"
    ".cfi_startproc\n"
    ".cfi_undefined x30\n"
    "blr x19\n"
    "brk #0\n"
    ".cfi_endproc\n"
    ".size customop_host_context_start, .-customop_host_context_start\n");
#endif

namespace neuron_host {

void context_prepare(CoreContext *to, char *low, size_t size, void (*entry)())
{
    uintptr_t top = (reinterpret_cast<uintptr_t>(low) + size) & ~static_cast<uintptr_t>(15);
#if defined(__x86_64__)
    // What the switch pops: the control state (MXCSR, then the x87 control
    // word), r15, r14, r13, r12, rbx (entry), rbp (0: the last frame) and
    // the address it returns to.  The start's call then leaves entry's
    // frame where the C library's makecontext() leaves it, 24 bytes below
    // the top, so a kernel has the same stack as it had.
    uint64_t *slots = reinterpret_cast<uint64_t *>(top - 16) - 8;
    uint32_t mxcsr;
    uint16_t control;
    __asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(control));
    memset(slots, 0, 8 * sizeof *slots);
    memcpy(slots, &mxcsr, sizeof mxcsr);
    memcpy(reinterpret_cast<char *>(slots) + 4, &control, sizeof control);
    slots[5] = reinterpret_cast<uint64_t>(entry);
    slots[7] = reinterpret_cast<uint64_t>(&customop_host_context_start);
#else
    // x19 (entry) ... x28, x29 (0: the last frame), x30 (the start), d8 to
    // d15, FPCR, and padding: entry starts at the top, as with makecontext().
    uint64_t *slots = reinterpret_cast<uint64_t *>(top) - 22;
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    memset(slots, 0, 22 * sizeof *slots);
    slots[0] = reinterpret_cast<uint64_t>(entry);
    slots[11] = reinterpret_cast<uint64_t>(&customop_host_context_start);
    slots[20] = fpcr;
#endif
    to->stack_pointer = slots;
}

void context_swap(CoreContext *from, CoreContext *to)
{
    customop_host_context_switch(&from->stack_pointer, to->stack_pointer);
}

void context_jump(CoreContext *to)
{
    void *left;
    customop_host_context_switch(&left, to->stack_pointer);
    __builtin_trap();
}

} // namespace neuron_host

#else

#ifdef CUSTOMOP_HOST_ASAN
#include <dlfcn.h>
#endif

namespace neuron_host {

namespace {

// libc's swapcontext.  ASan's own warns once per process that it does not
// fully support stack switches, even when every switch is told to it as
// the runtime does; it also clears the new stack's shadow, which
// stack_unpoison does.
int libc_swapcontext(ucontext_t *from, const ucontext_t *to)
{
#ifdef CUSTOMOP_HOST_ASAN
    using swap_function = int (*)(ucontext_t *, const ucontext_t *);
    static swap_function libc_swap = [] {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        void *found = libc ? dlsym(libc, "swapcontext") : nullptr;
        if (libc)
            dlclose(libc);
        return found ? reinterpret_cast<swap_function>(found) : &swapcontext;
    }();
    return libc_swap(from, to);
#else
    return swapcontext(from, to);
#endif
}

} // namespace

void context_prepare(CoreContext *to, char *low, size_t size, void (*entry)())
{
    // getcontext() is a system call (it reads the signal mask): once per
    // stack, and makecontext() every time.
    if (to->context.uc_stack.ss_sp != low || to->context.uc_stack.ss_size != size) {
        getcontext(&to->context);
        to->context.uc_stack.ss_sp = low;
        to->context.uc_stack.ss_size = size;
        to->context.uc_link = nullptr;
    }
    makecontext(&to->context, entry, 0);
}

void context_swap(CoreContext *from, CoreContext *to)
{
    libc_swapcontext(&from->context, &to->context);
}

void context_jump(CoreContext *to)
{
    setcontext(&to->context);
    __builtin_trap();
}

} // namespace neuron_host

#endif
