/* diag.h - the error a room reports to its caller.
 *
 * libbuildcustomop's one way of saying what went wrong: a function that
 * words an error fills the caller's struct diag and returns -1.  Only the
 * thin wrappers of system calls (fsutil.h, library_id.h, interrupt.h,
 * output_file_resolve) report errno as the calls they wrap do, for their
 * caller to word; none keeps a message buffer of its own. */
#ifndef DIAG_H
#define DIAG_H

#include "buildcustomop.h"

struct arena;

/* Filled by the first failing function; the message lives in the arena. */
struct diag {
	struct arena *arena;
	enum bco_error_kind kind;
	int schema_index; /* -1 when not about a schema */
	int column;       /* 1-based, 0 when not known */
	int signal;       /* the interrupting signal, or 0 */
	char *message;
};

/* Starts an empty diagnostic whose message will live in arena. */
void diag_init(struct diag *diag, struct arena *arena);
/* Records an error and returns -1, so callers can `return diag_fail(...)`. */
int diag_fail(struct diag *diag, enum bco_error_kind kind, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies the diagnostic into a bco_error owned by the caller (NULL if out of memory). */
bco_error *diag_export(const struct diag *diag);

#endif
