/* test_interrupt.c - catching SIGINT and SIGTERM, and giving them back. */
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

	signal(SIGINT, SIG_IGN);
	CHECK_INT(interrupt_catch(&outer, -1), 0, "catching with SIGINT ignored");
	CHECK(disposition(SIGINT) == SIG_IGN, "an ignored SIGINT stays ignored");
	raise(SIGINT);
	CHECK_INT(interrupt_caught(), 0, "and is not caught");
	CHECK_INT(interrupt_release(&outer), 0, "releasing reports nothing");
	CHECK(disposition(SIGINT) == SIG_IGN, "SIGINT is still ignored afterwards");
	return check_failures != 0;
}
