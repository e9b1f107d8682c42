/* program.c - see program.h. */
#include "program.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int program_open_standard_descriptors(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lower descriptors are open, so open() returns fd. */
		if (open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
			return -1;
	}
	return 0;
}

void program_end_by_signal(int signal_number)
{
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = SIG_DFL;
	sigemptyset(&action.sa_mask);
	sigaction(signal_number, &action, NULL);
	sigset_t unblock;
	sigemptyset(&unblock);
	sigaddset(&unblock, signal_number);
	sigprocmask(SIG_UNBLOCK, &unblock, NULL);
	raise(signal_number);
}
