/* cores.h - loading the core libraries and running an op on one thread per core.
 *
 * Each library is dlopen'ed as its own copy (RTLD_NOW | RTLD_LOCAL; the
 * eight per-core files are distinct files), so each core has its own
 * runtime state, as each core has its own image on the device. */
#ifndef CORES_H
#define CORES_H

#include <stddef.h>

#include <neuron/host_abi.h>

#define CORES_MAX 8
#define CORES_MESSAGE_SIZE (CUSTOMOP_HOST_ERROR_SIZE + 512)

struct core_library {
	int core;                 /* the core it runs on: 0..7, or -1 for NAME.so */
	char *path;
	void *handle;
	int (*linked_core)(void);
	int (*register_ops)(void (*callback)(void *context, int index, const char *name),
	                    void *context, char error[CUSTOMOP_HOST_ERROR_SIZE]);
	int (*run)(struct customop_host_call *call);
	char **op_names;          /* in registration order */
	int op_count;
};

struct core_set {
	struct core_library libraries[CORES_MAX];
	int count;
};

enum core_outcome {
	CORE_DONE,         /* customop_host_run returned 0 */
	CORE_VIOLATION,    /* it returned -1: message is the runtime's call->error */
	CORE_FAULTED,      /* a signal abandoned the core: message says which and where */
	CORE_NOT_STARTED   /* the thread could not be set up: message says why */
};

struct core_result {
	enum core_outcome outcome;
	char message[CORES_MESSAGE_SIZE];
};

/* Opens NAME.so (core_count 1) or NAME_cpu0.so .. NAME_cpu7.so (8) under
 * base, checks each one's linked core and reads its op names.  Returns 0, or
 * -1 with error set; cores_close frees what was opened in either case. */
int cores_open(struct core_set *set, const char *base, int core_count, char *error,
               size_t error_size);
/* Runs op on every core at once, all writing into output, and waits for
 * them; results has one entry per library.  Returns the number of cores
 * that did not finish with CORE_DONE. */
int cores_run(struct core_set *set, const char *op, const struct customop_host_tensor *args,
              int arg_count, const struct customop_host_tensor *output, size_t core_stack_size,
              struct core_result results[CORES_MAX]);
/* Frees the op names and paths; the libraries stay loaded (see cores.c). */
void cores_close(struct core_set *set);

#endif
