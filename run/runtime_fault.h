/* runtime_fault.h - a fault in memory that a core's runtime manages for the
 * kernel (the TCM pool, HBM addresses, translation windows), described by
 * that runtime
 * (customop_host_call.describe_fault). */
#ifndef RUNTIME_FAULT_H
#define RUNTIME_FAULT_H

#include <stddef.h>

struct core;

/* When core's kernel faulted (SIGSEGV or SIGBUS) in such memory, writes
 * "core N: op NAME: " and the runtime's description into message and
 * returns 1; else returns 0. */
int fault_in_runtime_memory(const struct core *core, char *message, size_t size);

#endif
