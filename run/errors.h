/* errors.h - filling in a struct rco_error.
 *
 * libruncustomop's one way of saying what went wrong, run-custom-op's too:
 * a function that words an error fills the caller's struct rco_error with
 * these helpers (a status and the message) and returns the status or -1;
 * none keeps a message buffer of its own.  A caller that adds context puts
 * it before the message (error_prefix).  Only wrappers of system calls
 * report errno, for their caller to word. */
#ifndef ERRORS_H
#define ERRORS_H

#include "runcustomop.h"

/* Sets error to status with the formatted message, about op (NULL: none)
 * and no core; returns status. */
int error_set(struct rco_error *error, enum rco_status status, const char *op,
              const char *format, ...) __attribute__((format(printf, 4, 5)));
/* error_set for the functions that return -1 on failure: sets error to
 * status with the formatted message, about no op and no core; returns -1. */
int error_fail(struct rco_error *error, enum rco_status status, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
/* Puts the formatted text before error's message (a path and ": ", an
 * option); the rest of error stays. */
void error_prefix(struct rco_error *error, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
/* Empties error (RCO_OK). */
void error_clear(struct rco_error *error);
/* Names the cores whose bits are set in cores (bit i: core i), as messages
 * do: "core 3", "cores 0 and 5", "cores 0-7", "cores 0-3, 5 and 7" (three
 * or more in a row as a range). */
void cores_text(unsigned cores, char *text, size_t size);
/* The rest of line after "core N: " for N core, or NULL when line does not
 * start so. */
const char *after_core_prefix(const char *line, int core);

#endif
