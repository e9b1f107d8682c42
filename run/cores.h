/* cores.h - running an op's cores on the calling thread, helped by workers when there are CPUs.
 *
 * Each core has its loaded library (its own copy, with its own runtime
 * state), its fault context and its output.  A call is one job per core,
 * taken from a shared counter by the caller and by the team's workers:
 * no more threads than the machine has CPUs (or than the options allow),
 * the caller included, so a single-core op runs on the caller alone.  The
 * cores run in any order, each on one thread at a time, as on the device
 * they share no memory protocol and cannot wait for each other.  The
 * counter carries the call's generation: a worker that wakes late finds
 * nothing left, and never takes a job of a later call for the one it woke
 * for.
 *
 * team_stop (a time limit, an interrupt, rco_stop) marks every core: those
 * not started are not started, the running ones are sent SIGURG.  The
 * caller gives them half a second; one that has not stopped by then (on a
 * worker: the caller's own job always ends before the caller goes on) is
 * lost, and its worker, its core and the team are never freed, as its
 * thread may still use them.  After the call every core's outcome stays
 * readable until the next call. */
#ifndef CORES_H
#define CORES_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <neuron/host_abi.h>

#include "core_output.h"
#include "fault.h"
#include "loader.h"

#define CORES_MAX 8

enum core_outcome {
	CORE_DONE,         /* customop_host_run returned 0 */
	CORE_VIOLATION,    /* it returned -1: the message is the runtime's call.error */
	CORE_FAULTED,      /* a signal abandoned the kernel: fault says which and where */
	CORE_STOPPED,      /* running when the call was stopped, and stopped */
	CORE_NOT_STARTED,  /* the call was stopped before its job started */
	CORE_LOST          /* running when the call was stopped, and it did not stop */
};

/* Why a call was stopped. */
enum team_stop {
	TEAM_NOT_STOPPED,
	TEAM_TIMED_OUT,     /* its time limit passed */
	TEAM_INTERRUPTED,   /* SIGINT, with stop_on_interrupt */
	TEAM_STOP_CALLED    /* rco_stop */
};

struct core_team;

/* A thread that runs jobs: a worker, or the caller during a call. */
struct core_runner {
	pthread_t thread;
	struct fault_stack *stack;   /* its alternate signal stack while it runs jobs */
	sigset_t mask;               /* its signal mask while it runs jobs, put back after a fault */
};

struct core {
	struct core_library library;
	struct core_team *team;
	/* The call, set by the caller before the call is published: */
	struct customop_host_call call;
	struct customop_host_tensor output;  /* each core's own copy of the output's header */
	/* What happened, readable after the call: */
	enum core_outcome outcome;
	struct fault_context fault;
	int guards_dropped;
	int abandoned;                       /* a kernel was abandoned, not yet taken back */
	struct core_output output_kept;
	struct core_runner *_Atomic runner;  /* the thread running its kernel now, or NULL */
};

struct core_worker {
	struct core_team *team;
	struct core_runner runner;
	pthread_t thread;
	int started;
	int lost;                            /* runs a lost core's kernel */
	sem_t wake;
	atomic_int sleeping;                 /* waits on wake (or is about to) */
	int error;                           /* errno of its set-up, or 0 */
};

struct core_team {
	struct core *cores[CORES_MAX];       /* each allocated on its own */
	int count;
	struct core_worker *workers[CORES_MAX - 1];
	int worker_count;
	struct core_runner caller;           /* the calling thread, during a call */
	sigset_t core_signals;               /* unblocked on every thread while it runs jobs */
	/* The call's generation (high 32 bits) and its next job (low 32 bits). */
	_Atomic uint64_t ticket;
	atomic_uint open;                    /* the last generation the workers may take jobs of */
	atomic_int jobs_done;
	atomic_int stop;                     /* enum team_stop of the call in progress */
	sem_t finished;                      /* posted for a caller that waits */
	atomic_int caller_sleeping;
	atomic_int ready;                    /* workers set up */
	atomic_int quit;
	long long job_ns;                    /* the caller's fastest job in the last call */
	int spin;                            /* no more threads than CPUs: poll a moment before sleeping */
	int lost;                            /* a core was lost: the team is never freed */
	int record;                          /* what the cores' runtime records: CUSTOMOP_HOST_RECORD_* */
};

/* Makes a team of count cores (1 or 8) that runs on at most threads
 * threads, the caller's included (0: as many as the machine has CPUs),
 * with no library loaded and no worker started; interrupt: SIGINT is
 * unblocked too while jobs run.  Returns NULL when out of memory. */
struct core_team *team_create(int count, int threads, int interrupt, long print_limit);
/* Starts the workers; returns 0, or -1 with error set (RCO_ERROR_SYSTEM). */
int team_start(struct core_team *team, struct rco_error *error);
/* Runs op on every core and waits until every job has ended, or, after
 * team_stop, until the cores stopped or were lost; messages name the op by
 * label, and the arguments by arg_names (see customop_host_call).  Returns
 * the number of cores whose outcome is not CORE_DONE, or -1 with error set
 * (RCO_ERROR_SYSTEM, about op) when the calling thread cannot run jobs. */
int team_run(struct core_team *team, const char *op, const char *label,
             const struct customop_host_tensor *args, const char *const *arg_names, int arg_count,
             const struct customop_host_tensor *output, size_t core_stack_size,
             struct rco_error *error);
/* Why the last call was stopped, or TEAM_NOT_STOPPED. */
enum team_stop team_stopped(const struct core_team *team);
/* Stops the call in progress for reason (the first reason given stays):
 * marks every core and sends the stop signal to those running.
 * Async-signal-safe. */
void team_stop(struct core_team *team, enum team_stop reason);
/* Sends the stop signal again to the cores of a stopped call still running. */
void team_resend_stop(struct core_team *team);
/* Describes core's outcome of the last call, "core N: op NAME: ...", into
 * message; timeout is the call's time limit. */
void team_describe(const struct core *core, double timeout, char *message, size_t size);
/* Ends the workers and unloads the libraries (taking back what abandoned
 * kernels left first), or, when a core was lost, leaves that core, its
 * worker and the team behind. */
void team_destroy(struct core_team *team);

#endif
