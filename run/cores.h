/* cores.h - one thread per core, kept from call to call, running an op on all at once.
 *
 * Each core has its loaded library, its thread (started once, woken for
 * each call), its fault context and its output.  A call hands every core
 * the same op, arguments and output, wakes them all, and waits until the
 * last has finished or the time limit has passed; then the cores still
 * running are stopped (fault_request_stop), and those that do not stop
 * are lost: their memory is never freed, as their threads may still use it. */
#ifndef CORES_H
#define CORES_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include <neuron/host_abi.h>

#include "core_output.h"
#include "fault.h"
#include "loader.h"

#define CORES_MAX 8

enum core_outcome {
	CORE_DONE,         /* customop_host_run returned 0 */
	CORE_VIOLATION,    /* it returned -1: the message is the runtime's call.error */
	CORE_FAULTED,      /* a signal abandoned the kernel: fault says which and where */
	CORE_STOPPED,      /* still running at the time limit, and stopped */
	CORE_LOST          /* still running at the time limit, and it did not stop */
};

struct core_team;

struct core {
	struct core_library library;
	struct core_team *team;
	pthread_t thread;
	int thread_started;
	sem_t wake;
	int quit;
	atomic_int busy;                     /* from the wake-up until the kernel returned */
	/* The call, set by the caller before the wake-up: */
	struct customop_host_call call;
	struct customop_host_tensor output;  /* each core's own copy of the output's header */
	/* What happened, read by the caller after the call: */
	enum core_outcome outcome;
	struct fault_context fault;
	int guards_dropped;
	int abandoned;                       /* a kernel was abandoned, not yet cleaned up */
	struct core_output output_kept;
	int thread_error;                    /* errno of the thread's set-up, or 0 */
	sigset_t thread_mask;                /* the thread's signal mask, put back after a fault */
};

struct core_team {
	struct core *cores[CORES_MAX];       /* each allocated on its own */
	int count;
	atomic_int remaining;                /* cores still busy in this call */
	pthread_mutex_t lock;
	pthread_cond_t finished;             /* on CLOCK_MONOTONIC */
	int lost;                            /* a core was lost: the team is never freed */
	int spin;                            /* fewer cores than CPUs: poll a moment before sleeping */
	int record;                          /* what the cores' runtime records: CUSTOMOP_HOST_RECORD_* */
};

/* Makes a team of count cores (1 or 8) with no library loaded and no
 * thread; returns NULL when out of memory. */
struct core_team *team_create(int count, long print_limit);
/* Starts the threads; returns 0, or -1 with error set. */
int team_start(struct core_team *team, char *error, size_t error_size);
/* Runs op on every core and waits (timeout seconds, 0: no limit).  Returns
 * the number of cores whose outcome is not CORE_DONE; *timed_out is set
 * when the time limit passed. */
int team_run(struct core_team *team, const char *op, const struct customop_host_tensor *args,
             int arg_count, const struct customop_host_tensor *output, size_t core_stack_size,
             double timeout, int *timed_out);
/* Describes core's outcome of the last call, "core N: op NAME: ...", into message. */
void team_describe(const struct core *core, double timeout, char *message, size_t size);
/* Ends the threads and unloads the libraries, or, when a core was lost,
 * leaves that core and the team behind. */
void team_destroy(struct core_team *team);

#endif
