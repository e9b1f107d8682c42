/* cores.c - one thread per core, kept from call to call, running an op on all at once. */
#include "cores.h"
#include "runtime_fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The runtime runs kernels on its own emulated core stack, so the thread's
 * own stack holds only the runner's and the runtime's frames. */
#define CORE_THREAD_STACK ((size_t)1024 * 1024)
/* How long stopped cores get to come back, and how often they are asked. */
#define STOP_GRACE_NS 1000000000L
#define STOP_RETRY_NS 10000000L
/* With fewer cores than CPUs, how long a core thread looks for the next
 * call before it sleeps, and the caller for the cores' end: a thread woken
 * from sleep costs tens of microseconds on a busy or virtual machine, more
 * than a short op takes. */
#define CORE_SPIN_NS 50000L
#define CALLER_SPIN_NS 20000L

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

static void finish(struct core *core)
{
	struct core_team *team = core->team;
	atomic_store(&core->busy, 0);
	if (atomic_fetch_sub(&team->remaining, 1) == 1) {
		pthread_mutex_lock(&team->lock);
		pthread_cond_broadcast(&team->finished);
		pthread_mutex_unlock(&team->lock);
	}
}

static void run_job(struct core *core)
{
	/* The mask is not saved here (a system call each time): the way back
	 * from a handler, which leaves its signal blocked, puts back the
	 * thread's own mask instead. */
	if (sigsetjmp(core->fault.resume, 0) == 0) {
		fault_arm(&core->fault);
		/* A stop asked for before the arming found nothing to stop. */
		if (core->fault.stop_requested)
			siglongjmp(core->fault.resume, 1);
		int status = core->library.run(&core->call);
		fault_disarm(&core->fault);
		core->outcome = status == 0 ? CORE_DONE : CORE_VIOLATION;
		core->abandoned = 0;
	} else {
		pthread_sigmask(SIG_SETMASK, &core->thread_mask, NULL);
		fault_disarm(&core->fault);
		core->outcome = core->fault.stop_requested ? CORE_STOPPED : CORE_FAULTED;
		core->abandoned = 1;
	}
}

static long long nanoseconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - start->tv_sec) * 1000000000LL + now.tv_nsec - start->tv_nsec;
}

/* Polls done(context) for up to limit nanoseconds; returns whether it came true. */
static int spin_until(int (*done)(void *context), void *context, long limit)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int poll = 1;; poll++) {
		if (done(context))
			return 1;
		if (poll % 64 == 0 && nanoseconds_since(&start) > limit)
			return 0;
	}
}

/* Takes the wake-up if it has been posted, without sleeping. */
static int core_woken(void *context)
{
	struct core *core = context;
	return sem_trywait(&core->wake) == 0;
}

static int cores_finished(void *context)
{
	struct core_team *team = context;
	return atomic_load(&team->remaining) == 0;
}

static void *core_main(void *argument)
{
	struct core *core = argument;
	pthread_sigmask(SIG_SETMASK, NULL, &core->thread_mask);
	if (fault_thread_begin(&core->fault) != 0) {
		core->thread_error = errno;
		finish(core);
		return NULL;
	}
	finish(core);
	for (;;) {
		if (!core->team->spin || !spin_until(core_woken, core, CORE_SPIN_NS))
			while (sem_wait(&core->wake) != 0)
				; /* EINTR: a signal of the process's, handled */
		if (core->quit)
			break;
		run_job(core);
		finish(core);
	}
	fault_thread_end();
	return NULL;
}

struct core_team *team_create(int count, long print_limit)
{
	struct core_team *team = calloc(1, sizeof *team);
	if (!team)
		return NULL;
	team->count = count;
	team->spin = count < sysconf(_SC_NPROCESSORS_ONLN);
	pthread_condattr_t attributes;
	pthread_condattr_init(&attributes);
	pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
	pthread_cond_init(&team->finished, &attributes);
	pthread_condattr_destroy(&attributes);
	pthread_mutex_init(&team->lock, NULL);
	for (int i = 0; i < count; i++) {
		struct core *core = calloc(1, sizeof *core);
		if (!core || core_output_init(&core->output_kept, print_limit) != 0) {
			free(core);
			team_destroy(team);
			return NULL;
		}
		core->team = team;
		core->library.core = count == 1 ? -1 : i;
		sem_init(&core->wake, 0, 0);
		team->cores[i] = core;
	}
	return team;
}

static void deadline_after(struct timespec *deadline, long long nanoseconds)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	long long total = deadline->tv_nsec + nanoseconds % 1000000000LL;
	deadline->tv_sec += (time_t)(nanoseconds / 1000000000LL + total / 1000000000LL);
	deadline->tv_nsec = (long)(total % 1000000000LL);
}

/* Waits until no core is busy or the deadline (NULL: none) passes; returns
 * 0, or ETIMEDOUT. */
static int wait_for_cores(struct core_team *team, const struct timespec *deadline)
{
	int status = 0;
	pthread_mutex_lock(&team->lock);
	while (atomic_load(&team->remaining) > 0 && status != ETIMEDOUT)
		status = deadline ? pthread_cond_timedwait(&team->finished, &team->lock, deadline)
		                  : pthread_cond_wait(&team->finished, &team->lock);
	int left = atomic_load(&team->remaining);
	pthread_mutex_unlock(&team->lock);
	return left > 0 ? ETIMEDOUT : 0;
}

int team_start(struct core_team *team, char *error, size_t error_size)
{
	pthread_attr_t attributes;
	pthread_attr_init(&attributes);
	pthread_attr_setstacksize(&attributes, CORE_THREAD_STACK);
	atomic_store(&team->remaining, team->count);
	int status = 0;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		int started = pthread_create(&core->thread, &attributes, core_main, core);
		if (started != 0) {
			snprintf(error, error_size, "cannot start the thread of core %d: %s", i,
			         strerror(started));
			atomic_fetch_sub(&team->remaining, team->count - i);
			status = -1;
			break;
		}
		core->thread_started = 1;
	}
	pthread_attr_destroy(&attributes);
	wait_for_cores(team, NULL);
	for (int i = 0; i < team->count && status == 0; i++) {
		if (team->cores[i]->thread_error) {
			snprintf(error, error_size, "cannot give the thread of core %d a signal stack: %s",
			         i, strerror(team->cores[i]->thread_error));
			status = -1;
		}
	}
	return status;
}

/* Stops the cores still busy after the time limit; returns the number lost. */
static int stop_busy_cores(struct core_team *team)
{
	/* Without the handler, SIGURG would do nothing (its default), and a
	 * core could not be stopped. */
	int can_stop = fault_stop_acquire() == 0;
	struct timespec deadline;
	deadline_after(&deadline, STOP_GRACE_NS);
	for (;;) {
		for (int i = 0; i < team->count; i++) {
			struct core *core = team->cores[i];
			if (atomic_load(&core->busy) && can_stop)
				fault_request_stop(&core->fault, core->thread);
		}
		struct timespec retry, now;
		deadline_after(&retry, STOP_RETRY_NS);
		clock_gettime(CLOCK_MONOTONIC, &now);
		int last = now.tv_sec > deadline.tv_sec ||
		           (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
		if (wait_for_cores(team, last ? &deadline : &retry) == 0 || last)
			break;
	}
	if (can_stop)
		fault_stop_release();
	int lost = 0;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		if (atomic_load(&core->busy)) {
			core->outcome = CORE_LOST;
			lost++;
		}
	}
	return lost;
}

int team_run(struct core_team *team, const char *op, const struct customop_host_tensor *args,
             int arg_count, const struct customop_host_tensor *output, size_t core_stack_size,
             double timeout, int *timed_out)
{
	*timed_out = 0;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		core->output = *output;
		struct customop_host_call *call = &core->call;
		call->abi_version = CUSTOMOP_HOST_ABI_VERSION;
		call->op = op;
		call->args = args;
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
		fault_reset(&core->fault);
		core->guards_dropped = 0;
		core->outcome = CORE_DONE;
		core_output_reset(&core->output_kept);
		atomic_store(&core->busy, 1);
	}
	atomic_store(&team->remaining, team->count);
	for (int i = 0; i < team->count; i++)
		sem_post(&team->cores[i]->wake);
	struct timespec deadline;
	if (timeout > 0)
		deadline_after(&deadline, (long long)(timeout * 1e9));
	if (team->spin)
		spin_until(cores_finished, team, CALLER_SPIN_NS);
	if (wait_for_cores(team, timeout > 0 ? &deadline : NULL) != 0) {
		*timed_out = 1;
		if (stop_busy_cores(team) > 0)
			team->lost = 1;
	}
	int failed = 0;
	for (int i = 0; i < team->count; i++)
		failed += team->cores[i]->outcome != CORE_DONE;
	return failed;
}

/* "1.5 s", "2 s", "0.001 s" */
static void format_seconds(double seconds, char *out, size_t size)
{
	snprintf(out, size, "%g s", seconds);
}

void team_describe(const struct core *core, double timeout, char *message, size_t size)
{
	int id = core->library.core < 0 ? 0 : core->library.core;
	const char *op = core->call.op;
	const struct fault_context *fault = &core->fault;
	char limit[32];
	format_seconds(timeout, limit, sizeof limit);
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
		snprintf(message, size, "core %d: op %s: still running when the time limit of %s "
		         "passed: stopped", id, op, limit);
		break;
	case CORE_LOST:
		snprintf(message, size, "core %d: op %s: still running when the time limit of %s "
		         "passed, and it did not stop (it blocks SIGURG): it runs on, and may still "
		         "read and write the call's tensors", id, op, limit);
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

void team_destroy(struct core_team *team)
{
	if (!team)
		return;
	for (int i = 0; i < team->count; i++) {
		struct core *core = team->cores[i];
		if (!core)
			continue;
		if (core->outcome == CORE_LOST) {
			/* Its thread may still run, in its library, on this memory. */
			pthread_detach(core->thread);
			continue;
		}
		if (core->thread_started) {
			core->quit = 1;
			sem_post(&core->wake);
			pthread_join(core->thread, NULL);
		}
		sem_destroy(&core->wake);
		core_library_close(&core->library, !core->abandoned);
		core_output_free(&core->output_kept);
		free(core);
		team->cores[i] = NULL;
	}
	if (team->lost)
		return;
	pthread_cond_destroy(&team->finished);
	pthread_mutex_destroy(&team->lock);
	free(team);
}
