/* opsrecord.c - writing the .ops record of a host build, once its libraries are linked. */
#include "opsrecord.h"

#include <errno.h>
#include <string.h>

#include "arena.h"
#include "buildcustomop.h"
#include "codegen.h"
#include "diag.h"
#include "fsutil.h"
#include "library_id.h"

int opsrecord_write(struct arena *arena, const struct op *ops, size_t op_count,
                    char *const *libraries, size_t library_count, const char *path,
                    struct diag *diag)
{
	char **names = arena_alloc(arena, library_count * sizeof *names);
	char **ids = arena_alloc(arena, library_count * sizeof *ids);
	for (size_t i = 0; i < library_count; i++) {
		ids[i] = arena_alloc(arena, LIBRARY_ID_SIZE);
		if (library_id_of_file(libraries[i], ids[i]) != 0)
			return diag_fail(diag, BCO_ERROR_SYSTEM, "cannot read %s to record it in %s: %s",
			                 libraries[i], path, strerror(errno));
		names[i] = (char *)fs_basename(libraries[i]);
	}
	const char *record = codegen_ops_record(arena, ops, op_count, names, ids, library_count);
	return fs_write_atomic(arena, path, record, strlen(record), diag);
}
