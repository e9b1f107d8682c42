/* compdb.h - compile_commands.json, clang's JSON compilation database. */
#ifndef COMPDB_H
#define COMPDB_H

struct arena;
struct diag;
struct plan;

/* Writes <build>/compile_commands.json for the plan's compiles ("arguments"
 * form with "output"), atomically.  directory is the working directory the
 * commands run in.  Returns 0, or -1 with diag set. */
int compdb_write(struct arena *arena, const struct plan *plan, const char *directory,
                 const char *path, struct diag *diag);

#endif
