/* neuron/host_abi.h - how run-custom-op drives a host-built core library.
 *
 * A host build links each core library (<name>.so, or <name>_cpu0.so ..
 * <name>_cpu7.so) with the emulated runtime, which exports the functions
 * below with C linkage.  Each core library is loaded as its own copy and
 * called from one thread at a time (any thread), so every core has its own
 * runtime state (the argument cursor, the TCM pool, switched_stack), as
 * each core has its own image on the device.  This header is C and C++. */
#ifndef NEURON_HOST_ABI_H
#define NEURON_HOST_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUSTOMOP_HOST_ABI_VERSION 2
#define CUSTOMOP_HOST_MAX_RANK 8
#define CUSTOMOP_HOST_ERROR_SIZE 1024

/* The eight device dtypes, numbered as at::ScalarType numbers them in the
 * host SDK headers. */
enum customop_host_dtype {
	CUSTOMOP_HOST_UINT8 = 0,    /* kByte */
	CUSTOMOP_HOST_INT8 = 1,     /* kChar */
	CUSTOMOP_HOST_INT16 = 2,    /* kShort */
	CUSTOMOP_HOST_INT32 = 3,    /* kInt */
	CUSTOMOP_HOST_INT64 = 4,    /* kLong */
	CUSTOMOP_HOST_FLOAT16 = 5,  /* kHalf */
	CUSTOMOP_HOST_FLOAT32 = 6,  /* kFloat */
	CUSTOMOP_HOST_BFLOAT16 = 15 /* kBFloat16 */
};

/* A tensor in host memory, as the host passes it to the device.  Strides
 * are in elements.  The caller owns data. */
struct customop_host_tensor {
	int dtype;
	int rank;
	int64_t sizes[CUSTOMOP_HOST_MAX_RANK];
	int64_t strides[CUSTOMOP_HOST_MAX_RANK];
	void *data;
};

/* One invocation of one op on one core. */
struct customop_host_call {
	int abi_version;                           /* CUSTOMOP_HOST_ABI_VERSION */
	const char *op;                            /* the registered name */
	const struct customop_host_tensor *args;   /* scalars travel as 1-element tensors */
	int arg_count;
	struct customop_host_tensor *output;       /* the output buffer, shared by all cores */
	size_t core_stack_size;                    /* bytes; 0: CUSTOMOP_HOST_DEFAULT_CORE_STACK */
	/* Receives what the kernel prints (printf), with the printing core's id. */
	void (*print)(void *context, int core, const char *text, size_t length);
	/* Told of each guard region below a stack the runtime runs code on
	 * (description non-NULL when it starts, NULL when it ends).  A fault
	 * inside one is that stack's overflow; the caller's SIGSEGV handler
	 * reports it with the description and abandons the core. */
	void (*guard)(void *context, const void *start, size_t length, const char *description);
	/* Receives each warning of the call, whole: "core N: op NAME: TEXT",
	 * without a newline.  The op goes on.  A warning is given at most once
	 * per call.  NULL: warnings go to stderr. */
	void (*warn)(void *context, int core, const char *text);
	void *context;                             /* passed to print, guard and warn */
	char error[CUSTOMOP_HOST_ERROR_SIZE];      /* out: why the call failed */
};

/* The default emulated core stack: the device leaves kernels about 8 KiB of
 * locals; the host's frames (the runtime, libc's printf) need more than the
 * device's, so the core stack is that plus room for them.  Measured with
 * g++ 12 and glibc 2.36: the launcher, the wrapper and a printf("%g") take
 * about 4.3 KiB, so 12 KiB leaves a kernel about 7.7 KiB of locals (16 KiB
 * would leave 11.8 KiB, far above the device's). */
#define CUSTOMOP_HOST_DEFAULT_CORE_STACK (12 * 1024)

/* The core this library was linked for (0..7), or -1 for a single-core build. */
int customop_host_linked_core(void);
/* Calls register_funcs, which reads get_func_cnt, get_func_name and
 * get_func_ptr, and hands each op's index and name to callback.  Returns the
 * op count, or -1 (with a message in error) when the table is malformed. */
int customop_host_register(void (*callback)(void *context, int index, const char *name),
                           void *context, char error[CUSTOMOP_HOST_ERROR_SIZE]);
/* Runs call->op on this core: marshals the arguments, runs the launcher on
 * the emulated core stack, and returns 0, or -1 with call->error naming the
 * core, the op and the violated rule.  First it takes back what a call the
 * runner abandoned left (its stacks, its TCM blocks): a call of ABI version
 * 0 does only that, before the library is unloaded. */
int customop_host_run(struct customop_host_call *call);

#ifdef __cplusplus
}
#endif
#endif
