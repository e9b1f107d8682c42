/* runtime_fault.c - a fault in memory the core's runtime manages for the
 * kernel (the TCM pool, HBM addresses, translation windows), as the runtime
 * describes it. */
#include "runtime_fault.h"

#include <signal.h>
#include <stdio.h>

#include "cores.h"

int fault_in_runtime_memory(const struct core *core, char *message, size_t size)
{
	const struct fault_context *fault = &core->fault;
	if ((fault->signal_number != SIGSEGV && fault->signal_number != SIGBUS) ||
	    !core->call.describe_fault)
		return 0;
	char text[CUSTOMOP_HOST_ERROR_SIZE];
	if (!core->call.describe_fault(fault->address, text, sizeof text))
		return 0;
	int id = core->library.core < 0 ? 0 : core->library.core;
	snprintf(message, size, "core %d: op %s: %s", id,
	         core->call.label ? core->call.label : core->call.op, text);
	return 1;
}
