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

#define CUSTOMOP_HOST_ABI_VERSION 5
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

/* Elements [begin, end) of the output, counted in its elements in storage
 * order (the order the TCM and stream accessors use). */
struct customop_host_range {
	int64_t begin;
	int64_t end;
};

/* A set of the output's elements: those in ranges (sorted, disjoint and not
 * touching) and those whose bit is set in bits (bit i % 64 of word i / 64,
 * over all the output's elements; NULL when there is no bitmap). */
struct customop_host_elements {
	const struct customop_host_range *ranges;
	size_t range_count;
	const uint64_t *bits;
	int64_t count;                             /* the elements in the set */
};

/* What customop_host_call.record asks the runtime to record. */
#define CUSTOMOP_HOST_RECORD_COVERAGE 1        /* the output elements written and read */

/* The core ledger: what one core did to tensor memory during one call, as
 * the runtime saw it (see run-custom-op(1), THE PROFILE).  The counts are
 * kept on every call; the sets only with CUSTOMOP_HOST_RECORD_COVERAGE. */
struct customop_host_ledger {
	uint64_t element_reads;          /* uses of read-only element accessors */
	uint64_t element_writes;         /* uses of writable ones (each may write) */
	uint64_t stream_reads;           /* elements read through read stream accessors */
	uint64_t stream_writes;          /* elements written through write stream accessors */
	uint64_t buffered_stream_bytes;  /* the bytes of both through streams with a TCM buffer */
	uint64_t unbuffered_stream_elements; /* the elements through streams without one */
	uint64_t tensor_to_tcm_calls;
	uint64_t tensor_to_tcm_bytes;
	uint64_t tcm_to_tensor_calls;
	uint64_t tcm_to_tensor_bytes;
	uint64_t tcm_peak_bytes;         /* the most of the TCM pool in use at once, in 64-byte blocks */
	uint64_t elementwise_calls;      /* element-wise ops, fill_ and the filling factories */
	uint64_t elementwise_elements;
	uint64_t elementwise_bytes;      /* the bytes they read and wrote */
	uint64_t result_copy_bytes;      /* read and written by customop_return_tensor's copy */
	uint64_t host_nanoseconds;       /* the call's wall time on the host */
	int coverage_recorded;           /* written and read hold the call's sets */
	struct customop_host_elements written; /* output elements this core wrote */
	struct customop_host_elements read;    /* output elements this core read */
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
	/* Receives each warning of the call, whole: "core N: op LABEL: TEXT",
	 * without a newline.  The op goes on.  A warning is given at most once
	 * per call.  NULL: warnings go to stderr. */
	void (*warn)(void *context, int core, const char *text);
	void *context;                             /* passed to print, guard and warn */
	char error[CUSTOMOP_HOST_ERROR_SIZE];      /* out: why the call failed */
	int record;                                /* CUSTOMOP_HOST_RECORD_* flags */
	/* out: the core ledger of a call that returned 0; its pointers stay
	 * valid until the next call on this core. */
	struct customop_host_ledger ledger;
	/* out, set as the call starts: writes into text (size bytes) what a
	 * fault at address means when the address lies in memory the runtime
	 * manages for the kernel (the TCM pool, HBM addresses, translation
	 * windows), as "a read or write at byte
	 * 4096 of the 4096-byte TCM block allocated by tcm_malloc in f(), past
	 * its end ...", and returns 1; returns 0 for any other address.  Call
	 * it after the call faulted, before the next call on this core. */
	int (*describe_fault)(const void *address, char *text, size_t size);
	/* How messages name each argument after its number, as the op's schema
	 * writes it ("Tensor x": "argument 1 (Tensor x)"); arg_count of them,
	 * or NULL for the number alone. */
	const char *const *arg_names;
	/* How the errors and warnings of the call name the op (LABEL above):
	 * the name its caller knows it by, e.g. "my_ops::softmax (kernel
	 * softmax_kernel)"; NULL: op. */
	const char *label;
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
 * core, the op (by its label) and the violated rule, "core N: op LABEL: ...".  First it takes back what a call the
 * runner abandoned left (its stacks, its TCM blocks): a call of ABI version
 * 0 does only that, before the library is unloaded. */
int customop_host_run(struct customop_host_call *call);

#ifdef __cplusplus
}
#endif
#endif
