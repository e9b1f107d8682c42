/* test_interrupt.c - catching SIGINT, SIGTERM and SIGHUP, and giving them back;
 * guards in two threads at once. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "check.h"

static volatile sig_atomic_t own_handler_ran;

static void own_handler(int signal_number)
{
	own_handler_ran = signal_number;
}

static void (*disposition(int signal_number))(int)
{
	struct sigaction current;
	sigaction(signal_number, NULL, &current);
	return current.sa_handler;
}

/* A second thread that holds a guard while the main thread holds its own. */
struct other_thread {
	int ready[2];   /* the thread says it holds its guard */
	int go[2];      /* the main thread says the signal was sent */
	int wake[2];    /* the thread's guard's wake pipe */
	int caught;     /* what its guard caught */
	int released;   /* what its release returned */
};

static void *hold_a_guard(void *argument)
{
	struct other_thread *other = argument;
	struct interrupt_guard guard;
	char byte = 0;
	if (interrupt_catch(&guard, other->wake[1]) != 0)
		return NULL;
	ssize_t ignored = write(other->ready[1], &byte, 1);
	ignored = read(other->go[0], &byte, 1);
	(void)ignored;
	other->caught = interrupt_caught();
	other->released = interrupt_release(&guard);
	return NULL;
}

static void test_threads(void)
{
	struct other_thread other;
	memset(&other, 0, sizeof other);
	CHECK(pipe(other.ready) == 0 && pipe(other.go) == 0 && pipe(other.wake) == 0, "pipes for two threads");
	signal(SIGTERM, SIG_DFL);
	pthread_t thread;
	CHECK_INT(pthread_create(&thread, NULL, hold_a_guard, &other), 0, "a second thread");
	char byte;
	CHECK_INT(read(other.ready[0], &byte, 1), 1, "it holds a guard");
	struct interrupt_guard mine;
	CHECK_INT(interrupt_catch(&mine, -1), 0, "this thread takes one too");
	CHECK_INT(interrupt_caught(), 0, "a new guard has caught nothing");
	kill(getpid(), SIGTERM);
	CHECK_INT(interrupt_caught(), SIGTERM, "a signal to the process reaches this thread's guard");
	CHECK_INT(read(other.wake[0], &byte, 1), 1, "and wakes the other thread's pipe");
	CHECK_INT(write(other.go[1], &byte, 1), 1, "the other thread goes on");
	pthread_join(thread, NULL);
	CHECK_INT(other.caught, SIGTERM, "its guard caught it too");
	CHECK_INT(other.released, SIGTERM, "and its release reports it");
	CHECK(disposition(SIGTERM) != SIG_DFL, "its release left the signals caught for this thread's guard");
	CHECK_INT(interrupt_release(&mine), SIGTERM, "this thread's release reports it");
	CHECK(disposition(SIGTERM) == SIG_DFL, "the last release restores the disposition");
	for (int i = 0; i < 2; i++) {
		close(other.ready[i]);
		close(other.go[i]);
		close(other.wake[i]);
	}
}

int main(void)
{
	struct sigaction own;
	memset(&own, 0, sizeof own);
	own.sa_handler = own_handler;
	sigemptyset(&own.sa_mask);
	sigaction(SIGINT, &own, NULL);
	signal(SIGTERM, SIG_DFL);

	struct interrupt_guard outer, inner;
	int pipe_fds[2];
	CHECK(pipe(pipe_fds) == 0, "a pipe to wake");
	CHECK_INT(interrupt_catch(&outer, -1), 0, "the outer guard catches");
	CHECK(disposition(SIGINT) != own_handler && disposition(SIGTERM) != SIG_DFL,
	      "both signals are taken over");
	CHECK_INT(interrupt_caught(), 0, "nothing caught yet");
	raise(SIGINT);
	CHECK_INT(interrupt_caught(), SIGINT, "SIGINT is caught, not delivered");
	CHECK_INT(own_handler_ran, 0, "the caller's handler did not run");
	CHECK_INT(interrupt_catch(&inner, pipe_fds[1]), 0, "a nested guard");
	CHECK_INT(interrupt_caught(), SIGINT, "a nested guard keeps what the outer one caught");
	raise(SIGTERM);
	char byte;
	CHECK_INT(read(pipe_fds[0], &byte, 1), 1, "a signal under the nested guard wakes its pipe");
	CHECK_INT(interrupt_caught(), SIGINT, "the first signal is the one reported");
	CHECK_INT(interrupt_release(&inner), SIGINT, "the nested release reports it");
	CHECK(disposition(SIGINT) != own_handler, "and leaves the signals caught");
	CHECK_INT(interrupt_release(&outer), SIGINT, "the outer release reports it");
	CHECK(disposition(SIGINT) == own_handler && disposition(SIGTERM) == SIG_DFL,
	      "and restores both dispositions");
	CHECK_INT(interrupt_caught(), 0, "nothing is left caught afterwards");

	signal(SIGHUP, SIG_DFL);
	CHECK_INT(interrupt_catch(&outer, -1), 0, "catching again");
	CHECK(disposition(SIGHUP) != SIG_DFL, "SIGHUP is taken over too");
	raise(SIGHUP);
	CHECK_INT(interrupt_caught(), SIGHUP, "and caught, not delivered");
	CHECK_INT(interrupt_release(&outer), SIGHUP, "the release reports it");
	CHECK(disposition(SIGHUP) == SIG_DFL, "and restores its disposition");

	signal(SIGCHLD, SIG_IGN);
	CHECK_INT(interrupt_catch(&outer, -1), 0, "catching with SIGCHLD ignored");
	CHECK(disposition(SIGCHLD) == SIG_DFL, "SIGCHLD is not ignored meanwhile, so exit statuses can be read");
	interrupt_release(&outer);
	CHECK(disposition(SIGCHLD) == SIG_IGN, "and is ignored again afterwards");
	signal(SIGCHLD, SIG_DFL);

	test_threads();

	signal(SIGINT, SIG_IGN);
	CHECK_INT(interrupt_catch(&outer, -1), 0, "catching with SIGINT ignored");
	CHECK(disposition(SIGINT) == SIG_IGN, "an ignored SIGINT stays ignored");
	raise(SIGINT);
	CHECK_INT(interrupt_caught(), 0, "and is not caught");
	CHECK_INT(interrupt_release(&outer), 0, "releasing reports nothing");
	CHECK(disposition(SIGINT) == SIG_IGN, "SIGINT is still ignored afterwards");
	return check_failures != 0;
}
