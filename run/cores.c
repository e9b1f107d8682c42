/* cores.c - loading the core libraries and running an op on one thread per core.
 *
 * The libraries are never dlclose'd: a core abandoned after a fault leaves
 * its library's state half-changed, and unloading would run its
 * destructors over that state. */
#include "cores.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "fault.h"

/* The runtime runs kernels on its own emulated core stack, so the thread's
 * own stack holds only the runner's and the runtime's frames; 8 MiB is the
 * usual main-thread stack and far more than they need. */
#define CORE_THREAD_STACK (8 * 1024 * 1024)

static int fail(char *error, size_t error_size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *error, size_t error_size, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(error, error_size, format, args);
	va_end(args);
	return -1;
}

/* Looks up a function; the memcpy is how ISO C lets a data pointer become a
 * function pointer. */
static int find_function(void *handle, const char *name, void *function, size_t size)
{
	void *symbol = dlsym(handle, name);
	if (!symbol)
		return -1;
	memcpy(function, &symbol, size);
	return 0;
}

static void on_register(void *context, int index, const char *name)
{
	struct core_library *library = context;
	(void)index; /* the runtime reports the ops in index order */
	char **grown = realloc(library->op_names, (size_t)(library->op_count + 1) * sizeof *grown);
	if (!grown)
		return;
	library->op_names = grown;
	library->op_names[library->op_count] = strdup(name ? name : "");
	if (library->op_names[library->op_count])
		library->op_count++;
}

static int open_library(struct core_library *library, const char *path, int core, char *error,
                        size_t error_size)
{
	library->core = core;
	library->path = strdup(path);
	if (!library->path)
		return fail(error, error_size, "out of memory");
	library->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!library->handle)
		return fail(error, error_size, "cannot load %s: %s", path, dlerror());
	const char *missing = NULL;
	if (find_function(library->handle, "customop_host_run", &library->run,
	                  sizeof library->run) != 0)
		missing = "customop_host_run";
	if (find_function(library->handle, "customop_host_register", &library->register_ops,
	                  sizeof library->register_ops) != 0)
		missing = "customop_host_register";
	if (find_function(library->handle, "customop_host_linked_core", &library->linked_core,
	                  sizeof library->linked_core) != 0)
		missing = "customop_host_linked_core";
	if (missing)
		return fail(error, error_size, "%s is not a host core library: it does not export %s "
		            "(see neuron/host_abi.h); build it with build-custom-op --target host", path,
		            missing);
	int linked = library->linked_core();
	if (linked != core) {
		if (core < 0)
			return fail(error, error_size, "%s was linked for core %d, not as a single-core "
			            "library; rebuild it with build-custom-op --target host", path, linked);
		if (linked < 0)
			return fail(error, error_size, "%s was linked as a single-core library, not for "
			            "core %d; rebuild it with build-custom-op --target host", path, core);
		return fail(error, error_size, "%s was linked for core %d, not core %d; rebuild it "
		            "with build-custom-op --target host", path, linked, core);
	}
	char message[CUSTOMOP_HOST_ERROR_SIZE] = "";
	int count = library->register_ops(on_register, library, message);
	if (count < 0)
		return fail(error, error_size, "%s: registering its ops failed: %s", path, message);
	if (count != library->op_count)
		return fail(error, error_size, "%s: registering its ops failed: it reported %d ops "
		            "but named %d", path, count, library->op_count);
	return 0;
}

int cores_open(struct core_set *set, const char *base, int core_count, char *error,
               size_t error_size)
{
	memset(set, 0, sizeof *set);
	size_t path_size = strlen(base) + sizeof "_cpu0.so";
	char *path = malloc(path_size);
	if (!path)
		return fail(error, error_size, "out of memory");
	int status = 0;
	for (int i = 0; i < core_count && status == 0; i++) {
		if (core_count == 1)
			snprintf(path, path_size, "%s.so", base);
		else
			snprintf(path, path_size, "%s_cpu%d.so", base, i);
		set->count++;
		status = open_library(&set->libraries[i], path, core_count == 1 ? -1 : i, error,
		                      error_size);
	}
	free(path);
	return status;
}

void cores_close(struct core_set *set)
{
	for (int i = 0; i < set->count; i++) {
		struct core_library *library = &set->libraries[i];
		for (int k = 0; k < library->op_count; k++)
			free(library->op_names[k]);
		free(library->op_names);
		free(library->path);
	}
	memset(set, 0, sizeof *set);
}

/* Everything one core thread needs; the call's context points here. */
struct core_job {
	struct core_library *library;
	struct customop_host_call call;
	struct customop_host_tensor output;   /* each core's own copy of the shared output's header */
	struct fault_context fault;
	struct console_stream console;
	int guards_dropped;
	enum core_outcome outcome;
	char setup_error[128];
};

static void on_print(void *context, int core, const char *text, size_t length)
{
	struct core_job *job = context;
	(void)core; /* the library's linked core decides, as the loader's placement does */
	console_write(&job->console, text, length);
}

static void on_warn(void *context, int core, const char *text)
{
	(void)context;
	(void)core; /* the text names it */
	fprintf(stderr, "run-custom-op: warning: %s\n", text);
}

static void on_guard(void *context, const void *start, size_t length, const char *description)
{
	struct core_job *job = context;
	if (fault_guard(&job->fault, start, length, description) != 0)
		job->guards_dropped = 1;
}

static void *run_core(void *argument)
{
	struct core_job *job = argument;
	if (fault_thread_begin(&job->fault) != 0) {
		snprintf(job->setup_error, sizeof job->setup_error,
		         "cannot give the thread a signal stack: %s", strerror(errno));
		job->outcome = CORE_NOT_STARTED;
		return NULL;
	}
	console_open(&job->console, job->library->core);
	if (sigsetjmp(job->fault.resume, 1) == 0) {
		fault_arm(&job->fault);
		int status = job->library->run(&job->call);
		fault_disarm(&job->fault);
		job->outcome = status == 0 ? CORE_DONE : CORE_VIOLATION;
	} else {
		job->outcome = CORE_FAULTED;
	}
	console_close(&job->console);
	fault_thread_end();
	return NULL;
}

static void describe_result(const struct core_job *job, struct core_result *result)
{
	int core = job->library->core < 0 ? 0 : job->library->core;
	const struct fault_context *fault = &job->fault;
	result->outcome = job->outcome;
	switch (job->outcome) {
	case CORE_DONE:
		result->message[0] = '\0';
		break;
	case CORE_VIOLATION:
		snprintf(result->message, sizeof result->message, "%s",
		         job->call.error[0] ? job->call.error : "the runtime reported an error without "
		                                                "a message");
		break;
	case CORE_NOT_STARTED:
		snprintf(result->message, sizeof result->message, "core %d: op %s: %s", core,
		         job->call.op, job->setup_error);
		break;
	case CORE_FAULTED:
		if (fault->overflowed_guard >= 0) {
			snprintf(result->message, sizeof result->message,
			         "core %d: op %s: stack overflow in %s; build with a larger "
			         "-DSTACK_SIZE=<bytes> (see build-custom-op(1))",
			         core, job->call.op, fault->guards[fault->overflowed_guard].description);
		} else {
			snprintf(result->message, sizeof result->message,
			         "core %d: op %s: %s at address %p; the kernel used memory it does not "
			         "own%s",
			         core, job->call.op, fault_signal_text(fault->signal_number),
			         fault->address,
			         job->guards_dropped ? " (more guard regions were announced than are "
			                               "tracked, so a stack overflow may look like this)"
			                             : "");
		}
		break;
	}
}

int cores_run(struct core_set *set, const char *op, const struct customop_host_tensor *args,
              int arg_count, const struct customop_host_tensor *output, size_t core_stack_size,
              struct core_result results[CORES_MAX])
{
	struct core_job *jobs = calloc((size_t)set->count, sizeof *jobs);
	pthread_t threads[CORES_MAX];
	int started[CORES_MAX] = {0};
	if (!jobs) {
		for (int i = 0; i < set->count; i++) {
			results[i].outcome = CORE_NOT_STARTED;
			snprintf(results[i].message, sizeof results[i].message, "out of memory");
		}
		return set->count;
	}
	pthread_attr_t attributes;
	pthread_attr_init(&attributes);
	pthread_attr_setstacksize(&attributes, CORE_THREAD_STACK);
	for (int i = 0; i < set->count; i++) {
		struct core_job *job = &jobs[i];
		job->library = &set->libraries[i];
		job->output = *output;
		job->call.abi_version = CUSTOMOP_HOST_ABI_VERSION;
		job->call.op = op;
		job->call.args = args;
		job->call.arg_count = arg_count;
		job->call.output = &job->output;
		job->call.core_stack_size = core_stack_size;
		job->call.print = on_print;
		job->call.guard = on_guard;
		job->call.warn = on_warn;
		job->call.context = job;
		int status = pthread_create(&threads[i], &attributes, run_core, job);
		if (status != 0) {
			snprintf(job->setup_error, sizeof job->setup_error, "cannot start its thread: %s",
			         strerror(status));
			job->outcome = CORE_NOT_STARTED;
		} else {
			started[i] = 1;
		}
	}
	pthread_attr_destroy(&attributes);
	int failed = 0;
	for (int i = 0; i < set->count; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		describe_result(&jobs[i], &results[i]);
		failed += results[i].outcome != CORE_DONE;
	}
	free(jobs);
	return failed;
}
