/* program.h - what build-custom-op and run-custom-op do alike as programs:
 * their standard descriptors at start, and ending by a signal.  No arena,
 * no library state: both programs link it. */
#ifndef PROGRAM_H
#define PROGRAM_H

/* Opens /dev/null on each standard descriptor that is closed: a closed one
 * would be taken by the next file the program opens (a lock, an output),
 * and printing would write into that.  Returns 0, or -1 when /dev/null
 * cannot be opened. */
int program_open_standard_descriptors(void);
/* Ends the process by signal_number, with its default action and unblocked,
 * as make does after an interrupt, so that a caller (a shell loop) stops
 * too.  Returns only when that action does not end the process. */
void program_end_by_signal(int signal_number);

#endif
