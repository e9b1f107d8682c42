/* cores.c - running an op's cores on the calling thread, helped by workers when there are CPUs.
 *
 * sem_clockwait (waiting on CLOCK_MONOTONIC) is POSIX.1-2024; glibc has it
 * under _GNU_SOURCE. */
#define _GNU_SOURCE

#include "cores.h"
#include "errors.h"
#include "runtime_fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The runtime runs kernels on its own emulated core stack, so a worker's
 * own stack holds only the runner's and the runtime's frames. */
#define WORKER_STACK ((size_t)1024 * 1024)
/* How long stopped cores get to come back, and how often they are asked. */
#define STOP_GRACE_NS 500000000LL
#define STOP_RETRY_NS 10000000LL
/* Twice what waking a sleeping thread takes on a busy or virtual machine
 * (tens of microseconds): the workers are let in only for more work than
 * that, so a short op runs on the caller alone, with no hand-off. */
#define WAKE_WORTH_NS 200000LL
/* How long a worker looks for the next call before it sleeps, and the
 * caller (at least, and at most) for the workers' last jobs. */
#define WORKER_SPIN_NS 50000LL
#define CALLER_SPIN_NS 50000LL
#define CALLER_SPIN_MAX_NS 200000LL

static long long now_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static struct timespec timespec_of(long long nanoseconds)
{
	struct timespec at;
	at.tv_sec = (time_t)(nanoseconds / 1000000000LL);
	at.tv_nsec = (long)(nanoseconds % 1000000000LL);
	return at;
}

static uint32_t generation_of(uint64_t ticket)
{
	return (uint32_t)(ticket >> 32);
}

/* ---- the callbacks of the runtime, per core ---- */

static void on_print(void *context, int core_id, const char *text, size_t length)
{
	struct core *core = context;
	(void)core_id; /* the library's linked core decides, as the loader's placement does */
	core_output_print(&core->output_kept, text, length);
}

static void on_warn(void *context, int core_id, const char *text)
{
	struct core *core = context;
	(void)core_id; /* the text names it */
	core_output_warn(&core->output_kept, text);
}

static void on_guard(void *context, const void *start, size_t length, const char *description)
{
	struct core *core = context;
	if (fault_guard(&core->fault, start, length, description) != 0)
		core->guards_dropped = 1;
}

/* How fast the caller's jobs go.  The fastest job is the measure: a job the
 * machine's other work delayed is no sign of more work; so one job alone
 * does not outweigh the last call's. */
struct call_pace {
	long long last_ns;     /* the caller's fastest job in the last call */
	long long fastest_ns;  /* its fastest job in this call so far */
	int caller_jobs;
	int opened;            /* the workers may take jobs */
};

static long long job_estimate(const struct call_pace *pace)
{
	if (pace->caller_jobs == 0)
		return pace->last_ns;
	if (pace->caller_jobs == 1 && pace->last_ns < pace->fastest_ns)
		return pace->last_ns;
	return pace->fastest_ns;
}

/* ---- one job ---- */

static void run_job(struct core *core, struct core_runner *runner)
{
	fault_stack_enter(runner->stack, &core->fault);
	atomic_store(&core->runner, runner);
	/* The mask is not saved here (a system call each time): the way back
	 * from a handler, which leaves its signal blocked, puts back the
	 * runner's mask instead. */
	if (sigsetjmp(core->fault.resume, 0) == 0) {
		fault_arm(&core->fault);
		/* A stop asked for before the arming found nothing to stop. */
		if (atomic_load(&core->fault.stop_requested))
			siglongjmp(core->fault.resume, 1);
		int status = core->library.run(&core->call);
		fault_disarm(&core->fault);
		core->outcome = status == 0 ? CORE_DONE : CORE_VIOLATION;
		core->abandoned = 0;
	} else if (core->fault.signal_number == 0) {
		fault_disarm(&core->fault);
		core->outcome = CORE_NOT_STARTED;
	} else {
		pthread_sigmask(SIG_SETMASK, &runner->mask, NULL);
		fault_disarm(&core->fault);
		core->outcome = core->fault.signal_number == FAULT_STOP_SIGNAL ? CORE_STOPPED
		                                                              : CORE_FAULTED;
		core->abandoned = 1;
	}
	atomic_store(&core->runner, NULL);
	fault_stack_enter(runner->stack, NULL);
}

static int all_done(struct core_team *team)
{
	return atomic_load(&team->jobs_done) == team->count;
}

/* Lets the workers take the jobs of call generation, waking those asleep. */
static void open_to_workers(struct core_team *team, uint32_t generation)
{
	atomic_store(&team->open, generation);
	for (int i = 0; i < team->worker_count; i++)
		if (atomic_load(&team->workers[i]->sleeping))
			sem_post(&team->workers[i]->wake);
}

/* Runs the jobs of call generation that are left, one at a time.  The
 * caller (pace not NULL) opens the call to the workers once the jobs left
 * would take longer than waking a worker, at the pace of its own jobs so
 * far (or of the last call's, at first): a short op runs on the caller
 * alone, which is faster than sharing it. */
static void take_jobs(struct core_team *team, struct core_runner *runner, uint32_t generation,
                      struct call_pace *pace)
{
	uint64_t ticket = atomic_load(&team->ticket);
	for (;;) {
		uint32_t next = (uint32_t)ticket;
		if (generation_of(ticket) != generation || next >= (uint32_t)team->count)
			return;
		if (pace && !pace->opened && team->worker_count > 0 &&
		    (long long)(team->count - next) * job_estimate(pace) > WAKE_WORTH_NS) {
			open_to_workers(team, generation);
			pace->opened = 1;
		}
		if (!atomic_compare_exchange_weak(&team->ticket, &ticket, ticket + 1))
			continue;
		struct core *core = team->cores[next];
		long long start = pace ? now_ns() : 0;
		if (atomic_load(&team->stop) == TEAM_NOT_STOPPED)
			run_job(core, runner);
		if (pace) {
			long long took = now_ns() - start;
			if (pace->caller_jobs++ == 0 || took < pace->fastest_ns)
				pace->fastest_ns = took;
		}
		if (atomic_fetch_add(&team->jobs_done, 1) + 1 == team->count &&
		    atomic_load(&team->caller_sleeping))
			sem_post(&team->finished);
		ticket = atomic_load(&team->ticket);
	}
}

/* ---- workers ---- */

static int worker_should_go(struct core_team *team, uint32_t seen)
{
	return atomic_load(&team->open) != seen || atomic_load(&team->quit);
}

/* Waits until a call after generation seen is opened to the workers, or the
 * team quits. */
static void wait_for_call(struct core_worker *worker, uint32_t seen)
{
	struct core_team *team = worker->team;
	long long start = now_ns();
	for (int poll = 1; team->spin && !worker_should_go(team, seen); poll++)
		if (poll % 64 == 0 && now_ns() - start > WORKER_SPIN_NS)
			break;
	while (!worker_should_go(team, seen)) {
		atomic_store(&worker->sleeping, 1);
		if (!worker_should_go(team, seen))
			sem_wait(&worker->wake); /* EINTR: a signal of the process's, handled */
		atomic_store(&worker->sleeping, 0);
	}
}

static void *worker_main(void *argument)
{
	struct core_worker *worker = argument;
	struct core_team *team = worker->team;
	pthread_sigmask(SIG_UNBLOCK, &team->core_signals, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &worker->runner.mask);
	worker->runner.thread = pthread_self();
	if (fault_stack_install(worker->runner.stack, NULL) != 0)
		worker->error = errno;
	uint32_t seen = atomic_load(&team->open);
	atomic_fetch_add(&team->ready, 1);
	sem_post(&team->finished);
	if (worker->error)
		return NULL;
	for (;;) {
		wait_for_call(worker, seen);
		if (atomic_load(&team->quit))
			break;
		seen = atomic_load(&team->open);
		take_jobs(team, &worker->runner, seen, NULL);
	}
	stack_t none;
	memset(&none, 0, sizeof none);
	none.ss_flags = SS_DISABLE;
	fault_stack_restore(&none);
	return NULL;
}

/* ---- the team ---- */

/* The signals a thread leaves unblocked while it runs jobs: those that
 * report and stop a core, and SIGINT for a team that stops on it. */
static const int unblocked_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                        FAULT_STOP_SIGNAL, SIGINT};
#define CORE_SIGNAL_COUNT 6

struct core_team *team_create(int count, int threads, int interrupt, long print_limit)
{
	struct core_team *team = calloc(1, sizeof *team);
	if (!team)
		return NULL;
	team->count = count;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (threads <= 0)
		threads = cpus < 1 ? 1 : cpus > CORES_MAX ? CORES_MAX : (int)cpus;
	team->worker_count = (threads < count ? threads : count) - 1;
	/* More threads than CPUs: a thread that polls keeps another off its CPU. */
	team->spin = team->worker_count + 1 <= cpus;
	sigemptyset(&team->core_signals);
	for (int i = 0; i < CORE_SIGNAL_COUNT + (interrupt != 0); i++)
		sigaddset(&team->core_signals, unblocked_signals[i]);
	sem_init(&team->finished, 0, 0);
	int whole = (team->caller.stack = fault_stack_create()) != NULL;
	for (int i = 0; i < count && whole; i++) {
		struct core *core = calloc(1, sizeof *core);
		if (!core || core_output_init(&core->output_kept, print_limit) != 0) {
			free(core);
			whole = 0;
			break;
		}
		core->team = team;
		core->library.core = count == 1 ? -1 : i;
		core->library.copy_descriptor = -1;
		atomic_init(&core->runner, NULL);
		team->cores[i] = core;
	}
	for (int i = 0; i < team->worker_count && whole; i++) {
		struct core_worker *worker = calloc(1, sizeof *worker);
		if (!worker || !(worker->runner.stack = fault_stack_create())) {
			free(worker);
			whole = 0;
			break;
		}
		worker->team = team;
		sem_init(&worker->wake, 0, 0);
		team->workers[i] = worker;
	}
	if (!whole) {
		team_destroy(team);
		return NULL;
	}
	return team;
}

int team_start(struct core_team *team, struct rco_error *error)
{
	if (team->worker_count == 0)
		return 0;
	pthread_attr_t attributes;
	pthread_attr_init(&attributes);
	pthread_attr_setstacksize(&attributes, WORKER_STACK);
	int status = 0, started = 0;
	for (int i = 0; i < team->worker_count; i++) {
		struct core_worker *worker = team->workers[i];
		int failed = pthread_create(&worker->thread, &attributes, worker_main, worker);
		if (failed != 0) {
			status = error_fail(error, RCO_ERROR_SYSTEM, "cannot start a worker thread: %s",
			                    strerror(failed));
			break;
		}
		worker->started = 1;
		started++;
	}
	pthread_attr_destroy(&attributes);
	/* The workers that started report; wait for them all. */
	while (atomic_load(&team->ready) < started)
		sem_wait(&team->finished);
	while (sem_trywait(&team->finished) == 0)
		;
	for (int i = 0; i < team->worker_count && status == 0; i++) {
		if (team->workers[i]->error) {
			status = error_fail(error, RCO_ERROR_SYSTEM, "cannot give a worker thread a "
			                    "signal stack: %s", strerror(team->workers[i]->error));
		}
	}
	return status;
}

void team_resend_stop(struct core_team *team)
{
	for (int i = 0; i < team->count; i++) {
		struct core_runner *runner = atomic_load(&team->cores[i]->runner);
		if (runner)
			fault_request_stop(runner->thread);
	}
}

void team_stop(struct core_team *team, enum team_stop reason)
{
	int none = TEAM_NOT_STOPPED;
	atomic_compare_exchange_strong(&team->stop, &none, (int)reason);
	for (int i = 0; i < team->count; i++)
		fault_mark_stop(&team->cores[i]->fault);
	team_resend_stop(team);
	sem_post(&team->finished);
}

enum team_stop team_stopped(const struct core_team *team)
{
	return (enum team_stop)atomic_load(&team->stop);
}

/* Waits on finished until it is posted or until (CLOCK_MONOTONIC, 0: no limit). */
static void caller_wait(struct core_team *team, long long until)
{
	atomic_store(&team->caller_sleeping, 1);
	if (!all_done(team)) {
		if (until) {
			struct timespec at = timespec_of(until);
			sem_clockwait(&team->finished, CLOCK_MONOTONIC, &at);
		} else {
			sem_wait(&team->finished);
		}
	}
	atomic_store(&team->caller_sleeping, 0);
}

/* After team_stop: asks the cores still running again and again, for the
 * grace period, then marks those still running lost. */
static void stop_stragglers(struct core_team *team)
{
	long long deadline = now_ns() + STOP_GRACE_NS;
	for (;;) {
		team_resend_stop(team);
		long long now = now_ns();
		if (all_done(team) || now >= deadline)
			break;
		caller_wait(team, now + STOP_RETRY_NS < deadline ? now + STOP_RETRY_NS : deadline);
	}
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		struct core_runner *runner = atomic_load(&core->runner);
		if (!runner)
			continue;
		core->outcome = CORE_LOST;
		team->lost = 1;
		for (int w = 0; w < team->worker_count; w++)
			if (&team->workers[w]->runner == runner)
				team->workers[w]->lost = 1;
	}
	/* The others are on their way out of a job they did not start. */
	while (!team->lost && !all_done(team))
		caller_wait(team, now_ns() + STOP_RETRY_NS);
}

/* Waits for the workers' last jobs: polls for about two jobs' time, as
 * long as waking from sleep would take, then sleeps. */
static void wait_for_jobs(struct core_team *team, long long job_ns)
{
	long long start = now_ns();
	long long spin = 2 * job_ns < CALLER_SPIN_NS ? CALLER_SPIN_NS
	                 : 2 * job_ns > CALLER_SPIN_MAX_NS ? CALLER_SPIN_MAX_NS
	                                                  : 2 * job_ns;
	for (int poll = 1; team->spin && !all_done(team) && !atomic_load(&team->stop); poll++)
		if (poll % 64 == 0 && now_ns() - start > spin)
			break;
	while (!all_done(team)) {
		if (atomic_load(&team->stop)) {
			stop_stragglers(team);
			return;
		}
		caller_wait(team, 0);
	}
}

int team_run(struct core_team *team, const char *op, const char *label,
             const struct customop_host_tensor *args, const char *const *arg_names, int arg_count,
             const struct customop_host_tensor *output, size_t core_stack_size,
             struct rco_error *error)
{
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		core->output = *output;
		struct customop_host_call *call = &core->call;
		call->abi_version = CUSTOMOP_HOST_ABI_VERSION;
		call->op = op;
		call->args = args;
		call->arg_names = arg_names;
		call->arg_count = arg_count;
		call->output = &core->output;
		call->core_stack_size = core_stack_size;
		call->print = on_print;
		call->guard = on_guard;
		call->warn = on_warn;
		call->context = core;
		call->error[0] = '\0';
		call->record = team->record;
		call->describe_fault = NULL;
		call->label = label;
		fault_reset(&core->fault);
		core->guards_dropped = 0;
		core->outcome = CORE_NOT_STARTED;
		core_output_reset(&core->output_kept);
	}
	atomic_store(&team->stop, TEAM_NOT_STOPPED);
	atomic_store(&team->jobs_done, 0);
	while (sem_trywait(&team->finished) == 0)
		; /* a post for an earlier call that ended without waiting */

	/* The caller runs jobs too: with the fault stack, and the signals that
	 * stop and report a core unblocked. */
	stack_t own_stack;
	if (fault_stack_install(team->caller.stack, &own_stack) != 0) {
		error_set(error, RCO_ERROR_SYSTEM, op, "cannot give the calling thread an alternate "
		          "signal stack to run the cores on: %s%s", strerror(errno),
		          errno == EPERM ? " (rco_run was called on a signal stack, from a handler)" : "");
		return -1;
	}
	sigset_t own_mask;
	pthread_sigmask(SIG_UNBLOCK, &team->core_signals, &own_mask);
	int mask_changed = 0;
	team->caller.mask = own_mask;
	for (size_t i = 0; i < sizeof unblocked_signals / sizeof unblocked_signals[0]; i++) {
		int number = unblocked_signals[i];
		if (sigismember(&team->core_signals, number) && sigismember(&own_mask, number)) {
			sigdelset(&team->caller.mask, number);
			mask_changed = 1;
		}
	}
	team->caller.thread = pthread_self();

	uint32_t generation = generation_of(atomic_load(&team->ticket)) + 1;
	atomic_store(&team->ticket, (uint64_t)generation << 32);
	struct call_pace pace = {team->job_ns, 0, 0, 0};
	take_jobs(team, &team->caller, generation, &pace);
	wait_for_jobs(team, job_estimate(&pace));
	if (pace.caller_jobs)
		team->job_ns = pace.fastest_ns;

	fault_stack_restore(&own_stack);
	if (mask_changed)
		pthread_sigmask(SIG_SETMASK, &own_mask, NULL);
	int failed = 0;
	for (int i = 0; i < team->count; i++)
		failed += team->cores[i]->outcome != CORE_DONE;
	return failed;
}

/* ---- what happened ---- */

/* How a stopped call was stopped: "the time limit of 0.5 s passed", ... */
static void stop_text(enum team_stop stop, double timeout, char *out, size_t size)
{
	switch (stop) {
	case TEAM_TIMED_OUT:
		snprintf(out, size, "the time limit of %g s passed", timeout);
		break;
	case TEAM_INTERRUPTED:
		snprintf(out, size, "the op was interrupted (SIGINT)");
		break;
	default:
		snprintf(out, size, "rco_stop was called");
		break;
	}
}

void team_describe(const struct core *core, double timeout, char *message, size_t size)
{
	int id = core->library.core < 0 ? 0 : core->library.core;
	const char *op = core->call.label ? core->call.label : core->call.op;
	const struct fault_context *fault = &core->fault;
	char stopped[64];
	stop_text(team_stopped(core->team), timeout, stopped, sizeof stopped);
	switch (core->outcome) {
	case CORE_DONE:
		message[0] = '\0';
		break;
	case CORE_VIOLATION:
		snprintf(message, size, "%s", core->call.error[0] ? core->call.error
		                                                  : "the runtime reported an error "
		                                                    "without a message");
		break;
	case CORE_STOPPED:
		snprintf(message, size, "core %d: op %s: still running when %s: stopped", id, op,
		         stopped);
		break;
	case CORE_NOT_STARTED:
		snprintf(message, size, "core %d: op %s: not started when %s", id, op, stopped);
		break;
	case CORE_LOST:
		snprintf(message, size, "core %d: op %s: still running when %s, and it did not stop "
		         "(it blocks SIGURG): it runs on, and may still read and write the call's "
		         "tensors", id, op, stopped);
		break;
	case CORE_FAULTED:
		if (fault_in_runtime_memory(core, message, size))
			break;
		if (fault->overflowed_guard >= 0) {
			snprintf(message, size, "core %d: op %s: stack overflow in %s; build with a larger "
			         "-DSTACK_SIZE=<bytes> (see build-custom-op(1))", id, op,
			         fault->guards[fault->overflowed_guard].description);
		} else if (fault->signal_number == SIGSEGV || fault->signal_number == SIGBUS) {
			snprintf(message, size, "core %d: op %s: %s at address %p; the kernel used memory "
			         "it does not own%s", id, op, fault_signal_text(fault->signal_number),
			         fault->address,
			         core->guards_dropped ? " (more guard regions were announced than are "
			                                "tracked, so a stack overflow may look like this)"
			                              : "");
		} else if (fault->signal_number == SIGABRT) {
			snprintf(message, size, "core %d: op %s: the kernel called %s, as a failed assert() "
			         "does", id, op, fault_signal_text(fault->signal_number));
		} else {
			snprintf(message, size, "core %d: op %s: %s at address %p%s", id, op,
			         fault_signal_text(fault->signal_number), fault->address,
			         fault->signal_number == SIGFPE ? ", such as an integer division by zero"
			         : fault->signal_number == SIGILL ? ", such as __builtin_trap() executes"
			                                          : "");
		}
		break;
	}
}

/* ---- the end ---- */

static void free_core(struct core *core)
{
	if (core->abandoned)
		core_library_take_back(&core->library);
	core_library_close(&core->library);
	core_output_free(&core->output_kept);
	free(core);
}

void team_destroy(struct core_team *team)
{
	if (!team)
		return;
	atomic_store(&team->quit, 1);
	for (int i = 0; i < team->worker_count; i++) {
		struct core_worker *worker = team->workers[i];
		if (worker && worker->started && !worker->lost)
			sem_post(&worker->wake);
	}
	for (int i = 0; i < team->worker_count; i++) {
		struct core_worker *worker = team->workers[i];
		if (!worker)
			continue;
		if (worker->lost) {
			/* It may still run, in its core's library, on the team's memory. */
			pthread_detach(worker->thread);
			continue;
		}
		if (worker->started)
			pthread_join(worker->thread, NULL);
		sem_destroy(&worker->wake);
		fault_stack_free(worker->runner.stack);
		free(worker);
		team->workers[i] = NULL;
	}
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		if (core && core->outcome != CORE_LOST) {
			free_core(core);
			team->cores[i] = NULL;
		}
	}
	if (team->lost)
		return;
	fault_stack_free(team->caller.stack);
	sem_destroy(&team->finished);
	free(team);
}
