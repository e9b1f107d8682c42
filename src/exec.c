/* exec.c - run the steps of a build in parallel.
 *
 * One poll() loop watches every running job's output pipe plus a self-pipe
 * that the interrupt handler writes to, so an interrupt can never arrive
 * unnoticed between a check and the wait.  A job is over when its pipe
 * reached end of file and its process was reaped.  As ninja does, the loop
 * does not rely on SIGCHLD (a caller may block it): once a job's pipe has
 * closed, its process is waited for with waitpid, polling with a short,
 * growing timeout for the moment between the close and the exit.  All the
 * state of a run is its own, so threads may run exec_run at once. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "interrupt.h"

/* How long a job may ignore SIGTERM after an interrupt before SIGKILL. */
#define KILL_GRACE_MILLISECONDS 2000
/* The longest wait between two looks for an exited job whose pipe is closed. */
#define REAP_POLL_MILLISECONDS 50

extern char **environ;

struct job {
	int active;
	size_t step;
	pid_t pid;
	int fd;          /* read end of the output pipe, -1 after end of file */
	int reaped;
	int exit_status;
	struct buffer output;
};

struct run {
	struct arena *arena;
	struct step *steps;
	size_t step_count;
	const struct exec_options *options;
	struct diag *diag;
	unsigned char *step_started; /* step_state has no "running" */
	struct job *jobs;
	size_t job_slots;
	size_t running;
	struct pollfd *pollfds;  /* [0] is the self-pipe, then one per job slot */
	size_t *poll_job;        /* which job slot each pollfd after [0] watches */
	int self_pipe[2];
	size_t started;
	size_t total;            /* the steps that are to run */
	int stop_starting;       /* a failure without keep_going, or an interrupt */
	int interrupted;         /* the signal that stopped the build, or 0 */
	struct timespec kill_deadline;
	int killed_hard;
	int failed;
	char *first_failure;
	int handlers_installed;
	int reap_wait;           /* milliseconds until the next look for exited jobs */
	struct interrupt_guard interrupts;
	jmp_buf *outer_out_of_memory;
};

static void report(struct run *run, enum bco_message_kind kind, const char *text)
{
	if (run->options->progress)
		run->options->progress(run->options->progress_context, kind, text);
}

static int set_descriptor_flags(int fd, int close_on_exec, int nonblocking)
{
	if (close_on_exec) {
		int flags = fcntl(fd, F_GETFD);
		if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
			return -1;
	}
	if (nonblocking) {
		int flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
			return -1;
	}
	return 0;
}

static void close_self_pipe(struct run *run)
{
	for (int i = 0; i < 2; i++) {
		if (run->self_pipe[i] >= 0)
			close(run->self_pipe[i]);
		run->self_pipe[i] = -1;
	}
}

static int open_self_pipe(struct run *run)
{
	if (pipe(run->self_pipe) != 0) {
		run->self_pipe[0] = run->self_pipe[1] = -1;
		return -1;
	}
	if (set_descriptor_flags(run->self_pipe[0], 1, 1) != 0 ||
	    set_descriptor_flags(run->self_pipe[1], 1, 1) != 0) {
		int saved = errno;
		close_self_pipe(run);
		errno = saved;
		return -1;
	}
	return 0;
}

/* Puts the handlers back; returns the interrupt caught meanwhile, or 0. */
static int restore_handlers(struct run *run)
{
	if (!run->handlers_installed)
		return 0;
	run->handlers_installed = 0;
	return interrupt_release(&run->interrupts);
}

static int install_handlers(struct run *run)
{
	if (interrupt_catch(&run->interrupts, run->self_pipe[1]) != 0)
		return -1;
	run->handlers_installed = 1;
	return 0;
}

static int step_is_ready(const struct run *run, size_t index)
{
	const struct step *step = &run->steps[index];
	if (step->state != STEP_PENDING || run->step_started[index])
		return 0;
	for (size_t i = 0; i < step->dependency_count; i++) {
		size_t dependency = step->dependencies[i];
		if (dependency >= run->step_count)
			return 0;
		enum step_state state = run->steps[dependency].state;
		if (state != STEP_SUCCEEDED && state != STEP_UP_TO_DATE)
			return 0;
	}
	return 1;
}

static void delete_outputs(const struct step *step)
{
	for (size_t i = 0; i < step->output_count; i++)
		unlink(step->outputs[i]);
}

/* Records a failed step: its outputs go, and its report is shown. */
static void fail_step(struct run *run, struct step *step)
{
	step->state = STEP_FAILED;
	delete_outputs(step);
	struct buffer failure;
	buffer_init(&failure, run->arena);
	buffer_puts(&failure, "FAILED: ");
	for (size_t i = 0; i < step->output_count; i++) {
		if (i)
			buffer_putc(&failure, ' ');
		buffer_puts(&failure, step->outputs[i]);
	}
	buffer_putc(&failure, '\n');
	if (step->argv)
		buffer_put_shell_command(&failure, step->argv);
	buffer_putc(&failure, '\n');
	buffer_puts(&failure, step->output);
	if (run->options->explain_failure)
		run->options->explain_failure(run->options->explain_context, step, &failure);
	report(run, BCO_MESSAGE_FAILURE, failure.data);
	if (!run->failed)
		run->first_failure = failure.data;
	run->failed = 1;
	if (!run->options->keep_going)
		run->stop_starting = 1;
}

/* Spawns the step's command with its output on a new pipe.  Returns 0, or
 * an errno value when the command cannot be started. */
static int spawn_job(struct run *run, struct job *job, struct step *step)
{
	if (!step->argv || !step->argv[0])
		return EINVAL;
	int ends[2];
	if (pipe(ends) != 0)
		return errno;
	/* The write end must not be 0, 1 or 2: the child's redirections
	 * would clobber it, or keep its close-on-exec flag. */
	if (ends[1] <= STDERR_FILENO) {
		int moved = fcntl(ends[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		int saved = errno;
		close(ends[1]);
		if (moved < 0) {
			close(ends[0]);
			return saved;
		}
		ends[1] = moved;
	}
	int error = 0;
	if (set_descriptor_flags(ends[0], 1, 0) != 0 || set_descriptor_flags(ends[1], 1, 0) != 0) {
		error = errno;
		close(ends[0]);
		close(ends[1]);
		return error;
	}

	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attributes;
	sigset_t defaults, empty;
	sigemptyset(&empty);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGCHLD);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGQUIT);
	/* SIGHUP stays as inherited, so that nohup still protects the tools. */
	if ((error = posix_spawn_file_actions_init(&actions)) != 0) {
		close(ends[0]);
		close(ends[1]);
		return error;
	}
	if ((error = posix_spawnattr_init(&attributes)) != 0) {
		posix_spawn_file_actions_destroy(&actions);
		close(ends[0]);
		close(ends[1]);
		return error;
	}
	pid_t pid = -1;
	if ((error = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) == 0 &&
	    (error = posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO)) == 0 &&
	    (error = posix_spawn_file_actions_adddup2(&actions, ends[1], STDERR_FILENO)) == 0 &&
	    (error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
	                                                   POSIX_SPAWN_SETSIGMASK)) == 0 &&
	    (error = posix_spawnattr_setpgroup(&attributes, 0)) == 0 &&
	    (error = posix_spawnattr_setsigdefault(&attributes, &defaults)) == 0 &&
	    (error = posix_spawnattr_setsigmask(&attributes, &empty)) == 0)
		error = posix_spawnp(&pid, step->argv[0], &actions, &attributes, step->argv,
		                     run->options->environment ? run->options->environment : environ);
	posix_spawnattr_destroy(&attributes);
	posix_spawn_file_actions_destroy(&actions);
	close(ends[1]);
	if (error != 0) {
		close(ends[0]);
		return error;
	}
	/* job is never NULL: start_step runs only while a slot is free. */
	job->pid = pid; /* NOLINT(clang-analyzer-core.NullDereference) */
	job->fd = ends[0];
	return 0;
}

/* Starts step index in a free job slot; a command that cannot be spawned
 * ends there as a failed step. */
static void start_step(struct run *run, size_t index)
{
	struct step *step = &run->steps[index];
	struct job *job = NULL;
	for (size_t i = 0; i < run->job_slots && !job; i++)
		if (!run->jobs[i].active)
			job = &run->jobs[i];
	run->started++;
	run->step_started[index] = 1;
	if (run->options->verbose && step->argv) {
		struct buffer command;
		buffer_init(&command, run->arena);
		buffer_put_shell_command(&command, step->argv);
		report(run, BCO_MESSAGE_COMMAND, command.data);
	}
	char *status = arena_printf(run->arena, "[%zu/%zu] %s %s", run->started, run->total,
	                            step->action ? step->action : "",
	                            step->target ? step->target : "");
	report(run, BCO_MESSAGE_STATUS, status);
	if (run->options->step_starting)
		run->options->step_starting(run->options->hook_context, index);

	int error = spawn_job(run, job, step);
	if (error != 0) {
		step->exit_status = 127;
		step->output = arena_printf(run->arena, "build-custom-op: cannot run '%s': %s\n",
		                            step->argv && step->argv[0] ? step->argv[0] : "",
		                            strerror(error));
		fail_step(run, step);
		if (run->options->step_finished)
			run->options->step_finished(run->options->hook_context, index);
		return;
	}
	/* A slot is free: start_ready_steps keeps running below job_slots. */
	job->active = 1; /* NOLINT(clang-analyzer-core.NullDereference) */
	job->step = index;
	job->reaped = 0;
	job->exit_status = 0;
	buffer_init(&job->output, run->arena);
	run->running++;
	if (run->options->step_spawned)
		run->options->step_spawned(run->options->hook_context, index, job->pid);
}

static void start_ready_steps(struct run *run)
{
	for (size_t i = 0; i < run->step_count && run->running < run->job_slots; i++) {
		if (run->stop_starting || interrupt_caught() != 0)
			return;
		if (step_is_ready(run, i))
			start_step(run, i);
	}
}

static void now(struct timespec *time)
{
	clock_gettime(CLOCK_MONOTONIC, time);
}

static int milliseconds_until(struct timespec deadline)
{
	struct timespec current;
	now(&current);
	long long left = (long long)(deadline.tv_sec - current.tv_sec) * 1000 +
	                 (deadline.tv_nsec - current.tv_nsec) / 1000000;
	if (left < 0)
		return 0;
	/* Round up so the wait never wakes just before the deadline. */
	return (int)left + 1;
}

static void signal_job(const struct job *job, int signal_number)
{
	/* The job leads its own process group, which takes its children too. */
	if (kill(-job->pid, signal_number) != 0 && errno == ESRCH)
		kill(job->pid, signal_number);
}

static void begin_interrupt(struct run *run)
{
	run->interrupted = interrupt_caught();
	run->stop_starting = 1;
	for (size_t i = 0; i < run->job_slots; i++)
		if (run->jobs[i].active && !run->jobs[i].reaped)
			signal_job(&run->jobs[i], SIGTERM);
	now(&run->kill_deadline);
	run->kill_deadline.tv_sec += KILL_GRACE_MILLISECONDS / 1000;
	run->kill_deadline.tv_nsec += (KILL_GRACE_MILLISECONDS % 1000) * 1000000L;
	if (run->kill_deadline.tv_nsec >= 1000000000L) {
		run->kill_deadline.tv_sec++;
		run->kill_deadline.tv_nsec -= 1000000000L;
	}
}

static void drain_self_pipe(struct run *run)
{
	char bytes[64];
	while (read(run->self_pipe[0], bytes, sizeof bytes) > 0)
		continue;
}

static void read_job_output(struct job *job)
{
	char bytes[65536];
	ssize_t got = read(job->fd, bytes, sizeof bytes);
	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (got <= 0) {
		close(job->fd);
		job->fd = -1;
		return;
	}
	buffer_append(&job->output, bytes, (size_t)got);
}

static void reap_jobs(struct run *run)
{
	for (size_t i = 0; i < run->job_slots; i++) {
		struct job *job = &run->jobs[i];
		if (!job->active || job->reaped)
			continue;
		int status;
		pid_t got = waitpid(job->pid, &status, WNOHANG);
		if (got == 0 || (got < 0 && errno == EINTR))
			continue;
		job->reaped = 1;
		if (got < 0) {
			/* Someone else in this process reaped it first. */
			job->exit_status = 1;
			buffer_puts(&job->output, "build-custom-op: the exit status of the command was lost\n");
		} else if (WIFEXITED(status)) {
			job->exit_status = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			job->exit_status = 128 + WTERMSIG(status);
		} else {
			job->exit_status = 1;
		}
	}
}

static void finish_job(struct run *run, struct job *job)
{
	struct step *step = &run->steps[job->step];
	if (job->fd >= 0) {
		close(job->fd);
		job->fd = -1;
	}
	job->active = 0;
	run->running--;
	step->exit_status = job->exit_status;
	step->output = job->output.data;
	if (run->interrupted) {
		/* Whatever it wrote may be partial, even if it exited 0. */
		step->state = STEP_FAILED;
		delete_outputs(step);
	} else if (job->exit_status != 0) {
		fail_step(run, step);
	} else {
		step->state = STEP_SUCCEEDED;
		if (job->output.length)
			report(run, BCO_MESSAGE_OUTPUT, step->output);
	}
	if (run->options->step_finished)
		run->options->step_finished(run->options->hook_context, job->step);
}

/* Whether a job's process may have exited unseen: its pipe is closed (or,
 * after an interrupt, something it left behind may hold the pipe open). */
static int awaiting_exit(const struct run *run)
{
	for (size_t i = 0; i < run->job_slots; i++)
		if (run->jobs[i].active && !run->jobs[i].reaped && (run->jobs[i].fd < 0 || run->interrupted))
			return 1;
	return 0;
}

/* Waits for output, an exited job or a signal, and handles what came.
 * Returns 0, or -1 with errno set when poll fails. */
static int wait_for_events(struct run *run)
{
	size_t count = 1;
	run->pollfds[0].fd = run->self_pipe[0];
	run->pollfds[0].events = POLLIN;
	run->pollfds[0].revents = 0;
	for (size_t i = 0; i < run->job_slots; i++) {
		if (!run->jobs[i].active || run->jobs[i].fd < 0)
			continue;
		run->pollfds[count].fd = run->jobs[i].fd;
		run->pollfds[count].events = POLLIN;
		run->pollfds[count].revents = 0;
		run->poll_job[count] = i;
		count++;
	}
	int timeout = -1;
	if (awaiting_exit(run)) {
		/* No SIGCHLD tells when it exits: look again soon, then less often. */
		timeout = run->reap_wait;
		run->reap_wait = run->reap_wait * 2 > REAP_POLL_MILLISECONDS ? REAP_POLL_MILLISECONDS
		                                                             : run->reap_wait * 2;
	} else {
		run->reap_wait = 1;
	}
	if (run->interrupted && !run->killed_hard) {
		int until_kill = milliseconds_until(run->kill_deadline);
		if (timeout < 0 || until_kill < timeout)
			timeout = until_kill;
	}
	int ready = poll(run->pollfds, (nfds_t)count, timeout);
	if (ready < 0 && errno != EINTR)
		return -1;
	if (ready > 0 && run->pollfds[0].revents)
		drain_self_pipe(run);
	if (interrupt_caught() != 0 && !run->interrupted)
		begin_interrupt(run);
	if (run->interrupted && !run->killed_hard && milliseconds_until(run->kill_deadline) == 0) {
		for (size_t i = 0; i < run->job_slots; i++)
			if (run->jobs[i].active && !run->jobs[i].reaped)
				signal_job(&run->jobs[i], SIGKILL);
		run->killed_hard = 1;
	}
	for (size_t i = 1; ready > 0 && i < count; i++)
		if (run->pollfds[i].revents)
			read_job_output(&run->jobs[run->poll_job[i]]);
	reap_jobs(run);
	for (size_t i = 0; i < run->job_slots; i++) {
		struct job *job = &run->jobs[i];
		/* After an interrupt a reaped job is over even if something it
		 * left behind still holds its pipe open. */
		if (job->active && job->reaped && (job->fd < 0 || run->interrupted))
			finish_job(run, job);
	}
	return 0;
}

/* Kills and reaps every running job at once: the way out when something
 * went wrong in the loop itself. */
static void abandon_jobs(struct run *run)
{
	for (size_t i = 0; i < run->job_slots; i++) {
		struct job *job = &run->jobs[i];
		if (!job->active)
			continue;
		if (!job->reaped) {
			signal_job(job, SIGKILL);
			while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
				continue;
		}
		if (job->fd >= 0)
			close(job->fd);
		job->fd = -1;
		job->active = 0;
		delete_outputs(&run->steps[job->step]);
		run->steps[job->step].state = STEP_FAILED;
	}
	run->running = 0;
}

static int finish_run(struct run *run, int loop_error)
{
	/* A signal caught after the loop's last look still counts: the
	 * caller must not lose a Ctrl-C. */
	int caught = restore_handlers(run);
	if (caught != 0 && !run->interrupted)
		run->interrupted = caught;
	close_self_pipe(run);
	run->arena->out_of_memory = run->outer_out_of_memory;
	for (size_t i = 0; i < run->step_count; i++)
		if (run->steps[i].state == STEP_PENDING)
			run->steps[i].state = STEP_NOT_RUN;
	if (loop_error)
		return diag_fail(run->diag, BCO_ERROR_SYSTEM, "cannot wait for the build steps: %s",
		                 strerror(loop_error));
	if (run->interrupted)
		return interrupt_fail(run->diag, run->interrupted);
	if (run->failed)
		return diag_fail(run->diag, BCO_ERROR_STEP, "%s", run->first_failure);
	for (size_t i = 0; i < run->step_count; i++)
		if (run->steps[i].state == STEP_NOT_RUN)
			return diag_fail(run->diag, BCO_ERROR_SYSTEM,
			                 "step %zu (%s %s) never became ready: its dependencies form a cycle or are missing",
			                 i, run->steps[i].action ? run->steps[i].action : "",
			                 run->steps[i].target ? run->steps[i].target : "");
	return 0;
}

int exec_run(struct arena *arena, struct step *steps, size_t step_count,
             const struct exec_options *options, struct diag *diag)
{
	/* Everything the loop needs is allocated before any handler is
	 * installed or any process started. */
	struct run *run = arena_alloc(arena, sizeof *run);
	run->arena = arena;
	run->steps = steps;
	run->step_count = step_count;
	run->options = options;
	run->diag = diag;
	run->self_pipe[0] = run->self_pipe[1] = -1;
	run->reap_wait = 1;
	run->outer_out_of_memory = arena->out_of_memory;
	char *empty = arena_strdup(arena, "");
	for (size_t i = 0; i < step_count; i++) {
		steps[i].output = empty;
		steps[i].exit_status = 0;
		if (steps[i].state == STEP_PENDING)
			run->total++;
	}
	if (run->total == 0)
		return 0;
	size_t jobs = options->jobs < 1 ? 1 : (size_t)options->jobs;
	run->job_slots = jobs < run->total ? jobs : run->total;
	run->step_started = arena_alloc(arena, step_count);
	run->jobs = arena_array(arena, run->job_slots, sizeof *run->jobs);
	run->pollfds = arena_array(arena, run->job_slots + 1, sizeof *run->pollfds);
	run->poll_job = arena_array(arena, run->job_slots + 1, sizeof *run->poll_job);
	for (size_t i = 0; i < run->job_slots; i++)
		run->jobs[i].fd = -1;

	if (open_self_pipe(run) != 0)
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot create a pipe: %s", strerror(errno));
	if (install_handlers(run) != 0) {
		int saved = errno;
		close_self_pipe(run);
		return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot install signal handlers: %s",
		                 strerror(saved));
	}

	/* Running out of memory while jobs run must still kill them and put
	 * the handlers back before the caller's handler takes over. */
	jmp_buf out_of_memory;
	/* Not kept past the call: finish_run and the handler below restore it. */
	/* cppcheck-suppress autoVariables */
	arena->out_of_memory = &out_of_memory;
	if (setjmp(out_of_memory)) {
		abandon_jobs(run);
		restore_handlers(run);
		close_self_pipe(run);
		arena->out_of_memory = run->outer_out_of_memory;
		arena_fail(arena);
	}

	int loop_error = 0;
	for (;;) {
		if (interrupt_caught() != 0 && !run->interrupted)
			begin_interrupt(run);
		start_ready_steps(run);
		if (run->running == 0)
			break;
		if (wait_for_events(run) != 0) {
			loop_error = errno;
			abandon_jobs(run);
			break;
		}
	}
	return finish_run(run, loop_error);
}
