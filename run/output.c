/* output.c - the files run-custom-op writes (see output.h). */
#include "output.h"

#include <setjmp.h>

#include "arena.h"
#include "diag.h"
#include "errors.h"
#include "output_file.h"

int output_write(const char *path, const void *bytes, size_t length, struct rco_error *error)
{
	jmp_buf out_of_memory;
	struct arena arena;
	arena_init(&arena, &out_of_memory);
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		return error_fail(error, RCO_ERROR_SYSTEM, "cannot write %s: out of memory", path);
	}
	struct diag diag;
	diag_init(&diag, &arena);
	struct output_part part = {bytes, length};
	int status = output_file_write(path, &part, 1, &diag);
	if (status != 0)
		error_fail(error, RCO_ERROR_SYSTEM, "%s", diag.message);
	arena_release(&arena);
	return status;
}
