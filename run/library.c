/* library.c - libruncustomop: open a host build, run its ops, close it (runcustomop.h). */
#include "runcustomop.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neuron/host_abi.h>

#include "check.h"
#include "cores.h"
#include "coverage.h"
#include "dispositions.h"
#include "errors.h"
#include "fault.h"
#include "monitor.h"
#include "opsfile.h"
#include "profile.h"
#include "sanitized.h"

/* The tensors of this API are the host ABI's, field for field. */
_Static_assert(sizeof(struct rco_tensor) == sizeof(struct customop_host_tensor),
               "struct rco_tensor must match struct customop_host_tensor");
_Static_assert(offsetof(struct rco_tensor, rank) == offsetof(struct customop_host_tensor, rank) &&
               offsetof(struct rco_tensor, sizes) == offsetof(struct customop_host_tensor, sizes) &&
               offsetof(struct rco_tensor, strides) ==
                       offsetof(struct customop_host_tensor, strides) &&
               offsetof(struct rco_tensor, data) == offsetof(struct customop_host_tensor, data),
               "struct rco_tensor must match struct customop_host_tensor");
_Static_assert(RCO_MAX_RANK == CUSTOMOP_HOST_MAX_RANK, "the ranks must agree");

/* --core-stack's bounds: one page at least; a GiB is far beyond the 4 MiB
 * the device's STACK_SIZE allows. */
#define CORE_STACK_MIN 4096
#define CORE_STACK_MAX (1024UL * 1024 * 1024)
/* A time limit longer than this is a mistake (about 31 years). */
#define TIMEOUT_MAX 1e9

/* Counts fork()s: a child has none of its parent's threads.  Around a
 * fork the locks of the process-wide state are taken, so that a child
 * never finds one held by a thread it does not have. */
static atomic_uint fork_generation;
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;

/* Every open library, for the child of a fork: its call lock may have
 * been held by a thread the child does not have. */
static pthread_mutex_t libraries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rco_library *libraries;
/* Closed libraries a lost core may still read, never freed. */
static struct rco_library *left_for_lost_cores;

static void forget_locks_in_child(void);

static void before_fork(void)
{
	pthread_mutex_lock(&libraries_lock);
	monitor_before_fork();
	dispositions_before_fork();
}

static void after_fork_in_parent(void)
{
	dispositions_after_fork();
	monitor_after_fork_in_parent();
	pthread_mutex_unlock(&libraries_lock);
}

static void after_fork_in_child(void)
{
	dispositions_after_fork();
	monitor_after_fork_in_child();
	atomic_fetch_add(&fork_generation, 1);
	forget_locks_in_child();
	pthread_mutex_unlock(&libraries_lock);
}

static void watch_forks(void)
{
	pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

/* What the cores read of a call: its arguments as they take them and how
 * messages name the op and them.  Allocated apart from the library, once,
 * so that a call allocates nothing, and so that a kernel that was lost (it
 * did not stop) keeps its own after the library starts new cores. */
struct call_buffers {
	struct customop_host_tensor args[RCO_MAX_ARGUMENTS];
	char arg_texts[RCO_MAX_ARGUMENTS][128]; /* "Tensor x" */
	const char *arg_names[RCO_MAX_ARGUMENTS];
	struct check_scalars scalars;
	struct customop_host_tensor output;
	char label[RCO_LABEL_SIZE];  /* how the call in progress names its op */
	struct call_buffers *lost;   /* those a lost kernel keeps, never freed */
};

struct rco_library {
	struct rco_library *next;   /* in libraries */
	unsigned generation;        /* fork_generation when its cores were started */
	char *path;
	int threads;
	size_t core_stack;
	double timeout;
	rco_print_fn print;
	rco_warn_fn warn;
	void *context;
	long print_limit;
	struct ops_file ops;
	struct core_team *team;
	int stop_on_interrupt;
	int holds_core_signals;     /* the core signals' handlers are held */
	int watched;                /* the monitor watches its calls */
	struct call_watch watch;
	pthread_mutex_t run_lock;   /* one call at a time */
	int stopped;                /* a call was stopped: the next one starts new cores */
	char stopped_reason[RCO_LABEL_SIZE + 128];
	int left_lost;              /* a core was lost: what it may read is never freed */
	struct call_buffers *call;
	int output_checks;          /* enum rco_output_checks, never DEFAULT */
	int has_profile;            /* the last call ran on every core to its end */
	/* last_profile is built from the team's ledgers when it is asked for
	 * (profile_op: the op of that call), not on every call */
	int profile_built;
	const char *profile_op;
	struct rco_profile last_profile;
	int label_op;               /* call->label is for this op (-1: none yet)... */
	char label_name[RCO_LABEL_SIZE]; /* ...called by this name */
	/* Room for the messages of a call, kept here, so a call allocates nothing. */
	char failure_lines[RCO_PROFILE_CORES][CUSTOMOP_HOST_ERROR_SIZE + 512];
	char warning_text[CUSTOMOP_HOST_ERROR_SIZE + 576];
};

const char *rco_version(void)
{
	return RCO_VERSION;
}

static int has_suffix(const char *text, const char *suffix)
{
	size_t length = strlen(text), suffix_length = strlen(suffix);
	return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

static char *path_with_suffix(const char *base, const char *suffix)
{
	size_t size = strlen(base) + strlen(suffix) + 1;
	char *path = malloc(size);
	if (path)
		snprintf(path, size, "%s%s", base, suffix);
	return path;
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The printf buffer size from the environment: -1 unset, 0, or a power of two. */
static int read_print_limit(long *limit, struct rco_error *error)
{
	const char *value = getenv(RCO_PRINT_BUFFER_VARIABLE);
	*limit = -1;
	if (!value)
		return 0;
	char *end = NULL;
	errno = 0;
	unsigned long long parsed = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
	int number = value[0] >= '0' && value[0] <= '9' && !*end;
	if (number && errno == ERANGE)
		parsed = ULLONG_MAX; /* all digits, beyond any type: too big */
	if (!number || parsed > RCO_PRINT_BUFFER_MAX || (parsed & (parsed - 1)) != 0)
		return error_set(error, RCO_ERROR_USAGE, NULL,
		                 RCO_PRINT_BUFFER_VARIABLE "=%s: %s; the device takes a power of two up "
		                 "to %d (the bytes of each core's printf buffer), or 0 to print nothing",
		                 value,
		                 !number ? "not a number"
		                 : parsed > RCO_PRINT_BUFFER_MAX ? "too big"
		                                                 : "not a power of two",
		                 RCO_PRINT_BUFFER_MAX);
	*limit = (long)parsed;
	return 0;
}

/* Reads BUILD/NAME.ops: what the last build that finished its links made. */
static int read_record(const char *path, struct ops_file *ops, struct rco_error *error)
{
	char *ops_path = path_with_suffix(path, ".ops");
	char *single = path_with_suffix(path, ".so");
	char *first_core = path_with_suffix(path, "_cpu0.so");
	int status = 0;
	int read = ops_path && single && first_core ? ops_read_file(ops_path, ops, error) : -2;
	if (read == -2)
		status = error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
	else if (read == 1 && !file_exists(single) && !file_exists(first_core))
		status = error_set(error, RCO_ERROR_BUILD, NULL,
		                   "no host build at %s: neither %s nor %s exists; build it with "
		                   "build-custom-op --target host", path, single, first_core);
	else if (read == 1)
		status = error_set(error, RCO_ERROR_BUILD, NULL,
		                   "%s not found: %s was not built for the host target by "
		                   "build-custom-op; build it with build-custom-op --target host",
		                   ops_path, path);
	else if (read != 0)
		status = error->status;
	else if (ops->version == 1)
		status = error_set(error, RCO_ERROR_BUILD, NULL,
		                   "%s was written by an earlier build-custom-op and does not say which "
		                   "libraries it describes; rebuild with build-custom-op --target host",
		                   ops_path);
	else if (ops->count == 0)
		status = error_set(error, RCO_ERROR_BUILD, NULL, "%s lists no ops", ops_path);
	free(ops_path);
	free(single);
	free(first_core);
	return status;
}

/* Checks the cores asked for (0: as the build is) against the record's layout. */
static int check_layout(const char *path, const struct ops_file *ops, int cores,
                        struct rco_error *error)
{
	if (cores == 0 || cores == ops->cores)
		return 0;
	if (cores == 8)
		return error_set(error, RCO_ERROR_BUILD, NULL,
		                 "%s is a single-core build (%s.ops names one core library): --cores 8 "
		                 "needs a multicore build; leave out --cores, or rebuild with "
		                 "build-custom-op --target host --multicore", path, path);
	return error_set(error, RCO_ERROR_BUILD, NULL,
	                 "%s is a multicore build (%s.ops names 8 core libraries): --cores 1 needs a "
	                 "single-core build; leave out --cores, or rebuild without --multicore",
	                 path, path);
}

/* Checks that a core library registers the ops the record lists, in order. */
static int check_registered_ops(const struct rco_library *library,
                                const struct core_library *core, struct rco_error *error)
{
	const struct ops_file *ops = &library->ops;
	int same = core->op_count == ops->count;
	for (int k = 0; same && k < ops->count; k++)
		same = strcmp(core->op_names[k], ops->ops[k].name) == 0;
	if (same)
		return 0;
	char listed[1024], registered[1024] = "";
	ops_list_names(ops, listed, sizeof listed);
	size_t used = 0;
	for (int k = 0; k < core->op_count && used < sizeof registered; k++)
		used += (size_t)snprintf(registered + used, sizeof registered - used, "%s%s",
		                         k ? ", " : "", core->op_names[k]);
	return error_set(error, RCO_ERROR_BUILD, NULL,
	                 "%s.ops lists the ops (%s) but %s registers (%s); the record is stale: "
	                 "rebuild with build-custom-op --target host", library->path, listed,
	                 core->path, registered);
}

static int load_cores(struct rco_library *library, int core_count, struct rco_error *error)
{
	size_t path_size = strlen(library->path) + sizeof "_cpu0.so";
	char *path = malloc(path_size);
	char *record = path_with_suffix(library->path, ".ops");
	if (!path || !record) {
		free(path);
		free(record);
		return error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
	}
	int status = 0;
	for (int i = 0; i < core_count && status == 0; i++) {
		if (core_count == 1)
			snprintf(path, path_size, "%s.so", library->path);
		else
			snprintf(path, path_size, "%s_cpu%d.so", library->path, i);
		struct core_library *core = &library->team->cores[i]->library;
		if (core_library_open(core, path, core_count == 1 ? -1 : i, library->ops.libraries[i].id,
		                      record, error) != 0)
			status = error->status;
		else
			status = check_registered_ops(library, core, error);
	}
	for (int i = 1; i < core_count && status == 0; i++)
		core_library_share_code(&library->team->cores[i]->library,
		                        &library->team->cores[0]->library);
	free(path);
	free(record);
	return status;
}

/* Makes the cores, loads the build's core libraries into them, starts
 * them and has the monitor watch their calls: for rco_open, and for a call
 * after a stop or a fork.  The process's handlers are held by the caller. */
static int start_cores(struct rco_library *library, struct rco_error *error)
{
	library->generation = atomic_load(&fork_generation);
	library->team = team_create(library->ops.cores, library->threads, library->stop_on_interrupt,
	                            library->print_limit);
	if (!library->team)
		return error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
	int status = load_cores(library, library->ops.cores, error);
	if (status == 0 && team_start(library->team, error) != 0)
		status = error->status;
	if (status == 0 && library->watched) {
		monitor_retarget(&library->watch, library->team);
	} else if (status == 0) {
		if (monitor_watch(&library->watch, library->team, library->stop_on_interrupt,
		                  error) != 0)
			status = error->status;
		else
			library->watched = 1;
	}
	return status;
}

/* Leaves the cores: joins and frees them, or, when one was lost, leaves it
 * running and keeps what it may read (the team, the call's buffers, the
 * record's names) for ever; in a child of fork() they are the parent's
 * threads, and only forgotten.  closing: the monitor stops watching too
 * (else the watch stays for the next cores, as rco_stop may use it). */
static void leave_cores(struct rco_library *library, int closing)
{
	if (library->generation == atomic_load(&fork_generation)) {
		if (library->watched && closing) {
			monitor_unwatch(&library->watch);
			library->watched = 0;
		} else if (library->watched) {
			monitor_retarget(&library->watch, NULL);
		}
		if (library->team && library->team->lost)
			library->left_lost = 1;
		team_destroy(library->team);
	} else if (library->watched) {
		/* The child's monitor watches none of the parent's calls: only the
		 * hold on the SIGINT handler is given back. */
		if (library->stop_on_interrupt)
			dispositions_release(DISPOSITIONS_INTERRUPT);
		library->watched = 0;
	}
	library->team = NULL;
}

static int check_options(const struct rco_options *options, struct rco_error *error)
{
	if (options->cores != 0 && options->cores != 1 && options->cores != 8)
		return error_set(error, RCO_ERROR_USAGE, NULL, "cores %d: expected 1 or 8 (or 0: as "
		                 "the build is)", options->cores);
	if (options->core_stack != 0 &&
	    (options->core_stack < CORE_STACK_MIN || options->core_stack > CORE_STACK_MAX))
		return error_set(error, RCO_ERROR_USAGE, NULL, "a core stack of %zu bytes: expected "
		                 "%d to %lu", options->core_stack, CORE_STACK_MIN, CORE_STACK_MAX);
	if (!(options->timeout >= 0 && options->timeout <= TIMEOUT_MAX))
		return error_set(error, RCO_ERROR_USAGE, NULL, "a time limit of %g s: expected 0 (no "
		                 "limit) to %g seconds", options->timeout, TIMEOUT_MAX);
	if (options->threads < 0 || options->threads > 8)
		return error_set(error, RCO_ERROR_USAGE, NULL, "threads %d: expected 1 to 8 (or 0: as "
		                 "many as the machine has CPUs)", options->threads);
	return 0;
}

int rco_open(const char *path, const struct rco_options *options, rco_library **result,
             struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	error_clear(error);
	if (result)
		*result = NULL;
	struct rco_options defaults;
	memset(&defaults, 0, sizeof defaults);
	if (!options)
		options = &defaults;
	if (!path || !result)
		return error_set(error, RCO_ERROR_USAGE, NULL, "rco_open needs a path and a place for "
		                 "the library");
	if (has_suffix(path, ".so") || has_suffix(path, ".ops"))
		return error_set(error, RCO_ERROR_USAGE, NULL, "%s: name the build without a suffix, "
		                 "as BUILD_DIR/NAME (e.g. build/relu for build/relu.so)", path);
	int status = check_options(options, error);
	int output_checks = RCO_OUTPUT_CHECKS_ERROR;
	if (status == 0)
		status = coverage_mode(options, &output_checks, error);
	long print_limit = -1;
	if (status == 0)
		status = read_print_limit(&print_limit, error);
	struct ops_file ops;
	memset(&ops, 0, sizeof ops);
	if (status == 0)
		status = read_record(path, &ops, error);
	if (status == 0)
		status = check_layout(path, &ops, options->cores, error);
	/* Loaded without ASan's runtime first, a sanitized build would end the process. */
	if (status == 0 && sanitized_check_build(path, ops.cores, error) != 0)
		status = error->status;
	if (status != 0) {
		ops_free(&ops);
		return status;
	}
	pthread_once(&fork_watch, watch_forks);
	struct rco_library *library = calloc(1, sizeof *library);
	struct call_buffers *call = calloc(1, sizeof *call);
	if (!library || !call) {
		free(library);
		free(call);
		ops_free(&ops);
		return error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
	}
	library->ops = ops;
	library->call = call;
	library->label_op = -1;
	library->generation = atomic_load(&fork_generation);
	pthread_mutex_init(&library->run_lock, NULL);
	pthread_mutex_lock(&libraries_lock);
	library->next = libraries;
	libraries = library;
	pthread_mutex_unlock(&libraries_lock);
	library->threads = options->threads;
	library->core_stack = options->core_stack;
	library->timeout = options->timeout;
	library->print = options->print;
	library->warn = options->warn;
	library->context = options->context;
	library->print_limit = print_limit;
	library->output_checks = output_checks;
	library->stop_on_interrupt = options->stop_on_interrupt != 0;
	library->path = strdup(path);
	if (!library->path) {
		rco_close(library);
		return error_set(error, RCO_ERROR_SYSTEM, NULL, "out of memory");
	}
	if (dispositions_hold(DISPOSITIONS_CORES, fault_on_signal) != 0)
		status = error_set(error, RCO_ERROR_SYSTEM, NULL, "cannot install the fault "
		                   "handlers: %s", strerror(errno));
	else
		library->holds_core_signals = 1;
	if (status == 0)
		status = start_cores(library, error);
	if (status != 0) {
		rco_close(library);
		return status;
	}
	*result = library;
	return 0;
}

/* In the child of a fork (one thread, the libraries' list held): a call
 * lock another thread of the parent held would be held for ever. */
static void forget_locks_in_child(void)
{
	for (struct rco_library *library = libraries; library; library = library->next)
		pthread_mutex_init(&library->run_lock, NULL);
}

void rco_close(rco_library *library)
{
	if (!library)
		return;
	/* In a child of fork(), the cores are the parent's: only the process's
	 * signal handlers are given back. */
	int forked = library->generation != atomic_load(&fork_generation);
	leave_cores(library, 1);
	pthread_mutex_lock(&libraries_lock);
	for (struct rco_library **at = &libraries; *at; at = &(*at)->next) {
		if (*at == library) {
			*at = library->next;
			break;
		}
	}
	/* A lost core may still fault: its handlers stay.  Its kernel may still
	 * read the op's name and arguments here. */
	if (library->left_lost) {
		library->next = left_for_lost_cores;
		left_for_lost_cores = library;
	}
	pthread_mutex_unlock(&libraries_lock);
	if (library->left_lost)
		return;
	if (library->holds_core_signals)
		dispositions_release(DISPOSITIONS_CORES);
	if (forked)
		return;
	ops_free(&library->ops);
	free(library->path);
	free(library->call);
	pthread_mutex_destroy(&library->run_lock);
	free(library);
}

int rco_core_count(const rco_library *library)
{
	return library ? library->ops.cores : 0;
}

int rco_op_count(const rco_library *library)
{
	return library ? library->ops.count : 0;
}

int rco_op_index(const rco_library *library, const char *name)
{
	const struct op_record *op = library && name ? ops_find(&library->ops, name) : NULL;
	return op ? (int)(op - library->ops.ops) : -1;
}

static const struct op_record *op_at(const rco_library *library, int index)
{
	return library && index >= 0 && index < library->ops.count ? &library->ops.ops[index] : NULL;
}

/* op's record, for a call of function ("rco_run"); NULL with error set
 * (RCO_ERROR_USAGE) when there is no library or no such op. */
static const struct op_record *record_for_call(const rco_library *library, int op,
                                               const char *function, struct rco_error *error)
{
	const struct op_record *record = op_at(library, op);
	if (!library)
		error_set(error, RCO_ERROR_USAGE, NULL, "%s needs a library", function);
	else if (!record)
		error_set(error, RCO_ERROR_USAGE, NULL, "no op with index %d (%s has %d)", op,
		          library->path, library->ops.count);
	return record;
}

const char *rco_op_name(const rco_library *library, int index)
{
	const struct op_record *op = op_at(library, index);
	return op ? op->name : NULL;
}

const char *rco_op_kinds(const rco_library *library, int index)
{
	const struct op_record *op = op_at(library, index);
	return op ? op->kinds : NULL;
}

const char *rco_op_signature(const rco_library *library, int index)
{
	const struct op_record *op = op_at(library, index);
	return op ? op->signature : NULL;
}

long rco_print_buffer_size(const rco_library *library)
{
	return library ? library->print_limit : -1;
}

static void op_label(const char *name, const char *function, char *label, size_t size);

size_t rco_describe_argument(const rco_library *library, int op, const char *name, int argument,
                             char *text, size_t size)
{
	const struct op_record *record = op_at(library, op);
	if (!record || argument < -1 || argument >= (int)strlen(record->kinds)) {
		if (text && size > 0)
			*text = '\0';
		return 0;
	}
	char label[RCO_LABEL_SIZE];
	op_label(name, record->name, label, sizeof label);
	return check_describe(record, label, argument, text, size);
}

int rco_check_arguments(const rco_library *library, int op, const char *name,
                        const struct rco_argument *arguments, int count,
                        const struct rco_tensor *output, struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	error_clear(error);
	const struct op_record *record = record_for_call(library, op, "rco_check_arguments", error);
	if (!record)
		return error->status;
	char label[RCO_LABEL_SIZE];
	op_label(name, record->name, label, sizeof label);
	struct customop_host_tensor args[RCO_MAX_ARGUMENTS], host_output;
	struct check_scalars scalars;
	return check_arguments(record, arguments, count, output, args, &scalars, &host_output, label,
	                       error);
}

int rco_accept_tensor(const rco_library *library, int op, const char *name, int argument,
                      const struct rco_tensor_description *tensor, int *copy,
                      struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	int ignored;
	if (!copy)
		copy = &ignored;
	const struct op_record *record = op_at(library, op);
	if (!record || !tensor) {
		error_clear(error);
		if (record_for_call(library, op, "rco_accept_tensor", error))
			error_set(error, RCO_ERROR_USAGE, NULL, "rco_accept_tensor needs a tensor");
		return error->status;
	}
	int problem = check_accept(tensor, copy);
	if (problem == 0)
		return 0;
	/* The label and the message are made for a refusal only. */
	error_clear(error);
	char label[RCO_LABEL_SIZE];
	op_label(name, record->name, label, sizeof label);
	return check_refuse(record, label, argument, tensor, problem, error);
}

int rco_check_argument_count(const rco_library *library, int op, int count,
                             struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	error_clear(error);
	const struct op_record *record = record_for_call(library, op, "rco_check_argument_count",
	                                                 error);
	return record ? check_argument_count(record, count, error) : (int)error->status;
}

static int id_of(const struct core *core)
{
	return core->library.core < 0 ? 0 : core->library.core;
}

/* The lines of the cores (their errors), each "core N: ...", to be said
 * once for every core that said the same. */
struct said {
	const char *line[RCO_PROFILE_CORES];
	int id[RCO_PROFILE_CORES];
	int count;
};

/* The cores of said whose line after "core N: " is the same as line k's
 * (k's included), as bits of core ids; 0 when an earlier line was the same
 * (it was said with that one). */
static unsigned same_as(const struct said *said, int k)
{
	const char *text = after_core_prefix(said->line[k], said->id[k]);
	if (!text)
		return 1u << said->id[k];
	unsigned cores = 0;
	for (int j = 0; j < said->count; j++) {
		const char *other = after_core_prefix(said->line[j], said->id[j]);
		if (!other || strcmp(other, text) != 0)
			continue;
		if (j < k)
			return 0;
		cores |= 1u << said->id[j];
	}
	return cores;
}

/* line ("core N: REST", of core id) for the cores whose bits are set:
 * as it is for one core, else "cores ...: REST". */
static void say_for_cores(const char *line, int id, unsigned cores, char *text, size_t size)
{
	const char *rest = after_core_prefix(line, id);
	if (!rest || (cores & (cores - 1)) == 0) {
		snprintf(text, size, "%s", line);
		return;
	}
	char names[64];
	cores_text(cores, names, sizeof names);
	snprintf(text, size, "%s: %s", names, rest);
}

/* Whether core (of team index i) gave a warning whose text after "core N: "
 * is rest. */
static int warned(const struct core *core, const char *rest)
{
	size_t at = 0;
	for (const char *text; (text = core_output_next_warning(&core->output_kept, &at));) {
		const char *other = after_core_prefix(text, id_of(core));
		if (other && strcmp(other, rest) == 0)
			return 1;
	}
	return 0;
}

struct warning_delivery {
	const struct rco_library *library;
	int core;
};

static void deliver_warning(void *context, const char *text)
{
	const struct warning_delivery *delivery = context;
	delivery->library->warn(delivery->library->context, delivery->core, text);
}

/* Hands each core's printf output to print, and the cores' warnings to
 * warn: a warning that several cores gave, once, naming them ("cores 0-7:
 * op relu: ..."), with the first of them as its core. */
static void deliver_output(struct rco_library *library, const char *label)
{
	struct core_team *team = library->team;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		if (core->outcome == CORE_LOST)
			continue; /* its thread may still write */
		size_t length;
		const char *text = core_output_printed(&core->output_kept, &length);
		if (length > 0 && library->print)
			library->print(library->context, id_of(core), text, length);
	}
	if (!library->warn)
		return;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		if (core->outcome == CORE_LOST)
			continue;
		size_t at = 0;
		for (const char *text; (text = core_output_next_warning(&core->output_kept, &at));) {
			const char *rest = after_core_prefix(text, id_of(core));
			unsigned cores = 1u << id_of(core);
			int said_before = 0;
			for (int j = 0; rest && j < team->count; j++) {
				const struct core *other = team->cores[j];
				if (j == i || other->outcome == CORE_LOST || !warned(other, rest))
					continue;
				if (j < i)
					said_before = 1;
				cores |= 1u << id_of(other);
			}
			if (said_before)
				continue;
			say_for_cores(text, id_of(core), cores, library->warning_text,
			              sizeof library->warning_text);
			library->warn(library->context, id_of(core), library->warning_text);
		}
		if (!core->output_kept.warnings_dropped)
			continue;
		char prefix[RCO_LABEL_SIZE + 32];
		snprintf(prefix, sizeof prefix, "core %d: op %s: ", id_of(core), label);
		struct warning_delivery delivery = {library, id_of(core)};
		core_output_dropped_warnings(&core->output_kept, prefix, deliver_warning, &delivery);
	}
}

/* One line per failure, said once for the cores that failed alike;
 * error->core is the first core that failed, error->op op. */
static int describe_failures(struct rco_library *library, const char *op, const char *label,
                             double timeout, struct rco_error *error)
{
	enum team_stop stop = team_stopped(library->team);
	error_set(error, stop == TEAM_TIMED_OUT ? RCO_ERROR_TIMEOUT
	                 : stop == TEAM_NOT_STOPPED ? RCO_ERROR_OP
	                                            : RCO_ERROR_INTERRUPTED,
	          op, "%s", "");
	struct said said;
	said.count = 0;
	for (int i = 0; i < library->team->count; i++) {
		const struct core *core = library->team->cores[i];
		if (core->outcome == CORE_DONE)
			continue;
		char *line = library->failure_lines[said.count];
		team_describe(core, timeout, line, sizeof library->failure_lines[said.count]);
		said.line[said.count] = line;
		said.id[said.count] = id_of(core);
		said.count++;
		if (error->core < 0) {
			error->core = id_of(core);
			if (core->outcome == CORE_FAULTED)
				error->signal = core->fault.signal_number;
			else if (core->outcome == CORE_STOPPED || core->outcome == CORE_LOST)
				error->signal = FAULT_STOP_SIGNAL;
		}
	}
	size_t used = 0;
	for (int k = 0; k < said.count && used < sizeof error->message; k++) {
		unsigned cores = same_as(&said, k);
		if (!cores)
			continue;
		say_for_cores(said.line[k], said.id[k], cores, library->warning_text,
		              sizeof library->warning_text);
		used += (size_t)snprintf(error->message + used, sizeof error->message - used, "%s%s",
		                         used ? "\n" : "", library->warning_text);
	}
	if (stop != TEAM_NOT_STOPPED) {
		library->stopped = 1;
		if (stop == TEAM_TIMED_OUT)
			snprintf(library->stopped_reason, sizeof library->stopped_reason,
			         "op %s ran past the time limit of %g s on core %d", label, timeout,
			         error->core);
		else
			snprintf(library->stopped_reason, sizeof library->stopped_reason,
			         "op %s was %s on core %d", label,
			         stop == TEAM_INTERRUPTED ? "interrupted (SIGINT)" : "stopped by rco_stop",
			         error->core);
	}
	return (int)error->status;
}

/* How messages name op (compute function function) for a caller who calls
 * it name: name, with the compute function beside it when name's last part
 * ("op" of "ns::op") is another name; function alone without a name. */
static void op_label(const char *name, const char *function, char *label, size_t size)
{
	if (!name || !*name) {
		snprintf(label, size, "%s", function);
		return;
	}
	const char *last = name;
	for (const char *at = strstr(name, "::"); at; at = strstr(at + 2, "::"))
		last = at + 2;
	if (strcmp(last, function) == 0)
		snprintf(label, size, "%s", name);
	else
		snprintf(label, size, "%s (kernel %s)", name, function);
}

/* Before a call: when the call before was stopped (a time limit, Ctrl-C,
 * rco_stop) or the process forked since the cores were started, new cores
 * take the old ones' place, loaded from the build's files again.  Called
 * with the call lock held. */
static int restart_cores(struct rco_library *library, const char *op, struct rco_error *error)
{
	int forked = library->generation != atomic_load(&fork_generation);
	if (!library->stopped && !forked && library->team)
		return 0;
	char reason[sizeof library->stopped_reason];
	if (forked)
		snprintf(reason, sizeof reason, "it was opened before this process was forked, and "
		         "its cores run in the parent only");
	else if (library->stopped)
		snprintf(reason, sizeof reason, "%s", library->stopped_reason);
	else
		snprintf(reason, sizeof reason, "its cores could not be started again");
	/* A lost kernel keeps the buffers of its call. */
	struct call_buffers *call = NULL;
	if (!forked && library->team && library->team->lost) {
		call = calloc(1, sizeof *call);
		if (!call)
			return error_set(error, RCO_ERROR_UNUSABLE, op, "%s runs no more ops: %s; out of "
			                 "memory for new cores", library->path, reason);
	}
	leave_cores(library, 0);
	if (call) {
		call->lost = library->call;
		library->call = call;
	}
	library->has_profile = 0;
	library->label_op = -1;
	if (start_cores(library, error) == 0) {
		library->stopped = 0;
		return 0;
	}
	char why[sizeof error->message];
	snprintf(why, sizeof why, "%s", error->message);
	leave_cores(library, 0);
	snprintf(library->stopped_reason, sizeof library->stopped_reason, "%s", reason);
	library->stopped = 1;
	error_clear(error);
	return error_set(error, RCO_ERROR_UNUSABLE, op, "%s runs no more ops: %s, and new cores "
	                 "could not be started: %s", library->path, reason, why);
}

int rco_run(rco_library *library, int op, const struct rco_argument *arguments, int count,
            const struct rco_tensor *output, double timeout, struct rco_error *error)
{
	return rco_run_named(library, op, NULL, arguments, count, output, timeout, error);
}

int rco_run_named(rco_library *library, int op, const char *name,
                  const struct rco_argument *arguments, int count,
                  const struct rco_tensor *output, double timeout, struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	error_clear(error);
	const struct op_record *record = record_for_call(library, op, "rco_run", error);
	if (!record)
		return error->status;
	if (timeout == RCO_DEFAULT_TIMEOUT)
		timeout = library->timeout;
	if (!(timeout >= 0 && timeout <= TIMEOUT_MAX))
		return error_set(error, RCO_ERROR_USAGE, record->name, "a time limit of %g s: "
		                 "expected 0 (no limit) to %g seconds", timeout, TIMEOUT_MAX);
	pthread_mutex_lock(&library->run_lock);
	int status = restart_cores(library, record->name, error);
	struct call_buffers *call = library->call;
	if (library->label_op != op || strcmp(library->label_name, name ? name : "") != 0) {
		op_label(name, record->name, call->label, sizeof call->label);
		snprintf(library->label_name, sizeof library->label_name, "%s", name ? name : "");
		library->label_op = op;
	}
	if (status == 0)
		status = check_arguments(record, arguments, count, output, call->args, &call->scalars,
		                         &call->output, call->label, error);
	if (status == 0) {
		/* A handler the process installed since the last call is replaced
		 * by the library's again (one system call when none was). */
		dispositions_refresh(DISPOSITIONS_CORES);
		if (library->stop_on_interrupt)
			dispositions_refresh(DISPOSITIONS_INTERRUPT);
		library->team->record = coverage_record_flags(library->output_checks, &call->output);
		monitor_call_begin(&library->watch, timeout);
		for (int i = 0; i < count && i < RCO_MAX_ARGUMENTS; i++) {
			op_argument_text(record, i, call->arg_texts[i], sizeof call->arg_texts[i]);
			call->arg_names[i] = call->arg_texts[i];
		}
		int failed = team_run(library->team, record->name, call->label, call->args,
		                      call->arg_names, count, &call->output, library->core_stack, error);
		monitor_call_end(&library->watch);
		library->has_profile = failed == 0;
		if (failed < 0) {
			status = error->status;
		} else {
			deliver_output(library, call->label);
			if (failed) {
				status = describe_failures(library, record->name, call->label, timeout,
				                           error);
			} else {
				library->profile_op = record->name;
				library->profile_built = 0;
				if (profile_collecting()) {
					profile_build(&library->last_profile, library->team, record->name);
					library->profile_built = 1;
					profile_collect(&library->last_profile);
				}
				status = coverage_check(library->team, &call->output,
				                        library->output_checks, record->name, call->label,
				                        library->warn, library->context, error);
			}
		}
	}
	pthread_mutex_unlock(&library->run_lock);
	/* A SIGINT kept while the op was stopped reaches the process now. */
	if (library->stop_on_interrupt)
		monitor_deliver_interrupt();
	return status;
}

int rco_last_profile(rco_library *library, struct rco_profile *profile)
{
	if (!library || !profile)
		return RCO_ERROR_USAGE;
	pthread_mutex_lock(&library->run_lock);
	int status = library->has_profile ? 0 : RCO_ERROR_USAGE;
	if (library->has_profile && !library->profile_built) {
		profile_build(&library->last_profile, library->team, library->profile_op);
		library->profile_built = 1;
	}
	if (library->has_profile)
		*profile = library->last_profile;
	pthread_mutex_unlock(&library->run_lock);
	return status;
}

void rco_stop(rco_library *library)
{
	if (library && library->watched)
		monitor_stop(&library->watch);
}
