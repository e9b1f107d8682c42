/* runtime.h - what the runtime's files share (not part of the SDK's API).
 *
 * Every core library links its own copy of the runtime, so the state here is
 * per core, as each core's image has its own on the device.  It includes no
 * C++ library header: print.cpp must not see <stdio.h> (see there). */
#ifndef CUSTOMOP_HOST_RUNTIME_H
#define CUSTOMOP_HOST_RUNTIME_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "neuron/host_abi.h"

// The runtime is compiled with hidden visibility; only host_abi.h's
// functions are what a core library exports.
#define CUSTOMOP_HOST_EXPORT __attribute__((visibility("default")))

namespace at {
class Tensor;
}

namespace neuron_host {

// run.cpp: the call in progress on this core (NULL outside one), and the
// way out of it after a violation (the error is already written).
customop_host_call *current_call();
[[noreturn]] void abandon_run();

// State of the runtime that is freed when the library is unloaded, but not
// while a call is in progress on the core: a kernel that a time limit
// could not stop (a lost core) still uses it, and exit() runs the
// destructors of every library still loaded.  value is constructed first.
template <class T>
union FreedWhenIdle {
    T value;
    FreedWhenIdle() : value() {}
    ~FreedWhenIdle()
    {
        if (!current_call())
            value.~T();
    }
};

// signals.cpp: the signal mask a kernel changed goes back to what it was
// before the call (the stack switches leave the mask alone), at the end of
// the call; a call the runner abandoned had its mask put back by the runner.
void signal_mask_restore();
void signal_mask_forget();

// violation.cpp: writes "core N: op NAME: " and the formatted rule to
// call->error.
void set_error(customop_host_call *call, const char *format, va_list arguments);

// violation.cpp: forgets the warnings given, so that each call warns anew.
void warnings_reset();

// neuron_utils.cpp: the core id as the kernel sees it (0 in a single-core
// build) and whether this is one of the eight libraries of a multicore build.
int core_id();
bool multicore_build();

// stacks.cpp: a stack of at least size bytes with an inaccessible guard
// region below it, announced to call->guard while it exists.
struct GuardedStack {
    char *mapping;       // NULL when there is no stack
    size_t mapping_size;
    char *low;           // the lowest usable byte
    size_t size;         // usable bytes (size rounded up to 16)
    char description[64];
};
// Maps the stack and announces its guard; false when the memory is missing.
bool guarded_stack_create(GuardedStack *stack, size_t size, const char *description);
// Withdraws the guard announcement and unmaps (nothing if there is no stack).
void guarded_stack_destroy(GuardedStack *stack);

// run.cpp: the emulated core stack of the call in progress.
const GuardedStack &core_stack();

// run.cpp: calls function(argument); a C++ exception that escapes it ends
// the op with a violation naming the exception.  The unwinder cannot cross
// from one stack to another, so the entry of each stack kernel code runs on
// (the core stack, the STACK_SIZE stack) goes through here.
void run_catching_exceptions(void (*function)(void *), void *argument);

// stack_switch.cpp: frees a heap stack left behind when a violation ended
// the op while the wrapper ran on it.
void stack_switch_reset();

// marshal.cpp: forgets the cursor and the output of an abandoned call.
void marshal_reset();
// marshal.cpp: the wrapper's result as customop_return_tensor last saw it
// in this invocation (NULL before): switchBack() then leaks it.
const at::Tensor *marshal_returned_result();

// tcm.cpp: each run gets a serial number; after a violation, or at the next
// run after a fault, the blocks allocated during that run go back to the
// pool (its destructors never ran).
void tcm_begin_run();
void tcm_release_run();
// tcm.cpp: at the end of an op, checks every block's guard (a violation
// when one was overwritten) and warns of the blocks the op did not free.
void tcm_end_run();
// tcm.cpp: a block of the pool for owner (who allocated it, as messages
// say it), with a guard after it; NULL when the pool cannot give it.
void *tcm_allocate(size_t bytes, const char *owner);
// tcm.cpp: checks the block's guard (found_at says where, for the message)
// and gives it back.
void tcm_give_back(void *block, const char *found_at);
size_t tcm_free_bytes();
size_t tcm_pool_size();
// tcm.cpp: the most of the pool in use since tcm_peak_reset, in bytes (of
// 64-byte blocks, as the device counts them).
void tcm_peak_reset();
uint64_t tcm_peak_bytes();
// tcm.cpp: what a fault at address in the TCM pool's reserved range was
// (see customop_host_call.describe_fault); 0 for another address.
int tcm_describe_fault(const void *address, char *text, size_t size);
// tcm.cpp: the access checks' verdict on a load or store of the kernel's
// code (at code) in the pool's reserved range: it returns when
// [address, address + size) lies in a live block's bytes; any other access
// is a violation naming the block.
void tcm_check_access(const char *address, size_t size, bool writes, const void *code);
// tcm.cpp: the local side of a copy with HBM (what: "neuron_memcpy";
// direction: "into" or "from"): inside the bytes of one live block of the
// pool, or a violation.
void tcm_check_local_range(const char *what, const char *direction, const void *local, size_t bytes);
// tcm.cpp: tcm_free and neuron_dataram_deallocate (what says which).
void free_block(void *pointer, const char *what);
// tcm.cpp: the fill pattern of fresh memory (FF FF FF 7F: NaN as float32,
// float16 and bfloat16) over [from, to).
void fill_with_pattern(char *from, char *to);

// access_checks.cpp: the address ranges the access checks send to the
// runtime (set by their owners; NULL begin: none), and whether there are
// HBM ranges beyond the first (hbm_check_access then sees every access).
enum ManagedRange { managed_tcm, managed_windows, managed_hbm, managed_range_count };
void managed_range_set(int which, const void *begin, size_t size);
void managed_extra_ranges(bool any);
// access_checks.cpp: the bytes of a live TCM block an access was checked
// in, which the next accesses to it need not look up; tcm.cpp sets it, and
// sets it to none (NULL, 0) whenever a block goes back to the pool.
void access_block_seen(const void *begin, size_t size);
// access_checks.cpp: while one lives, the runtime's own memcpy, memmove
// and memset calls are not checked as the kernel's (the windows' copies).
struct RuntimeCopy {
    RuntimeCopy();
    ~RuntimeCopy();
    RuntimeCopy(const RuntimeCopy &) = delete;
    RuntimeCopy &operator=(const RuntimeCopy &) = delete;
};
// access_checks.cpp: "relu(at::Tensor const&) read 4 bytes" (or "the
// kernel wrote 8 bytes" when code is in no named function).
void describe_access(bool writes, size_t size, const void *code, char *text, size_t text_size);

// hbm.cpp: HBM addresses.  At the end of an op: remaps the translation
// windows (keeping what the kernel wrote), warns of the HBM allocations the
// op did not free and frees them, and forgets the op's addresses.
void hbm_end_run();
// hbm.cpp: the same after a violation or a fault, without warning and
// without keeping what the kernel wrote through windows.
void hbm_release_run();
// hbm.cpp: the access checks' verdict on an access at address: nothing
// when it is not an HBM address, else a violation (an HBM address is not a
// pointer).
void hbm_check_access(uintptr_t address, size_t size, bool writes, const void *code);
// hbm.cpp: what a fault at an HBM address was; 0 for another address.
int hbm_describe_fault(const void *address, char *text, size_t size);

// windows.cpp: the translation windows of neuron_translate.
struct HbmObject;
// A Q7PtrType::operator[]: it takes a window round-robin as neuron_translate does.
void windows_translation_taken();
// The access checks' verdict on an access in the windows' area: the window's
// bytes are copied in as they are first touched and the access recorded in
// the ledger; outside a live window's bytes, a violation.
void windows_check_access(const char *address, size_t size, bool writes, const void *code);
// What a fault in the windows' area was; 0 for another address.
int windows_describe_fault(const void *address, char *text, size_t size);
// Before the runtime reads or writes bytes of tensor or allocation memory
// itself (neuron_memcpy, the TCM copies, element-wise ops and fill_, the
// copy of a returned tensor): writes back what the kernel changed through
// windows onto them.
void windows_sync(const void *memory, size_t bytes);
// After the runtime wrote them: windows onto them copy them again.
void windows_refresh(const void *memory, size_t bytes);
// An allocation freed: its windows are remapped, their changes dropped.
void windows_forget(const HbmObject &object);
// At the end of an op: remaps every window, writing back what the kernel
// changed when keep_changes.
void windows_end_run(bool keep_changes);

// code_address.cpp: " in FUNCTION" for a code address inside a function
// that has a dynamic symbol, else "" (text holds size bytes).
void describe_code_address(const void *address, char *text, size_t size);

// streams.cpp: forgets the streams of a run that a violation or a fault
// ended, and marks the end of a run.
void streams_begin_run();
void streams_end_run();

// op_checks.cpp: what is checked when the launcher is about to run (the
// arguments' and the output's dimensions) and after it returned (TCM
// guards, blocks not freed).  Both run on the core stack, so a broken rule
// is a violation like any other.
void op_begin();
void op_end();
// op_checks.cpp: the device's limits on the dimensions of a tensor passed
// in or returned (which names it in the message).
void check_dimensions(const int64_t *sizes, size_t rank, const char *which);
// op_checks.cpp: the warning for a 64-bit tensor the kernel makes or gets.
void warn_64_bit_tensor();

// print.cpp: sends text to call->print (or stdout outside a call).
void print_text(const char *text, size_t length);

} // namespace neuron_host

#endif
