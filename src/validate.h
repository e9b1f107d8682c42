/* validate.h - from (function name, schema) pairs to checked ops.
 *
 * No user string reaches the generated C++ unchecked: every function name is
 * a C identifier that is no keyword, no reserved identifier and no name of
 * the runtime, and the names the generator derives from it collide with
 * nothing. */
#ifndef VALIDATE_H
#define VALIDATE_H

#include <stddef.h>

#include "buildcustomop.h"
#include "schema.h"

struct arena;
struct diag;

/* The documented and the hard limits of the runtime. */
enum {
	OPS_DOCUMENTED_LIMIT = 10,     /* functions per library the runtime documents */
	OPS_HARD_LIMIT = 0x8000,       /* the runtime's entry refuses this many */
	OP_ARGUMENT_LIMIT = 10,        /* arguments the runtime's parser holds */
	FUNCTION_NAME_LIMIT = 32       /* a name must be shorter than this */
};

struct op {
	const char *function; /* the registered name and the kernel's C++ name */
	struct schema schema;
};

/* Parses every schema and checks every name, and the number of ops for
 * target: more than OPS_DOCUMENTED_LIMIT are an error for the host target
 * (its emulator refuses them) and a warning for the device.  functions may
 * be NULL, in which case each op takes the name inside its schema (as does
 * an op whose entry is NULL).  Warnings go to progress (may be NULL).
 * Returns 0 with *ops and *count set, or -1 with diag set. */
int validate_ops(struct arena *arena, enum bco_target target, const char *const *functions,
                 size_t function_count, const char *const *schemas, size_t schema_count,
                 bco_progress_fn progress, void *progress_context, struct op **ops, size_t *count,
                 struct diag *diag);

#endif
