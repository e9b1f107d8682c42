/* opsrecord.h - writing the .ops record of a host build, once its libraries are linked. */
#ifndef OPSRECORD_H
#define OPSRECORD_H

#include <stddef.h>

struct arena;
struct diag;
struct op;

/* Writes path (BUILD_DIR/NAME.ops): the ops, the layout and each linked
 * library (libraries, in core order) with its id (src/library_id.h).
 * Call it only when every link has succeeded.  Returns 0, or -1 with diag
 * set. */
int opsrecord_write(struct arena *arena, const struct op *ops, size_t op_count,
                    char *const *libraries, size_t library_count, const char *path,
                    struct diag *diag);

#endif
