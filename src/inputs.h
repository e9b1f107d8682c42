/* inputs.h - a build request's names, files and directories, checked
 * before anything is written.
 *
 * Every value that reaches a tool's command line or names a file is checked
 * here, so a bad one is refused with the reason instead of failing later in
 * a tool, and a build directory that holds the user's own files never has
 * one overwritten.  A path that starts with '-' is given back as "./-...",
 * so no tool takes it for an option. */
#ifndef INPUTS_H
#define INPUTS_H

#include <stddef.h>

#include "buildcustomop.h"

struct arena;
struct diag;

enum {
	LIBRARY_NAME_LIMIT = 200 /* leaves room for "_cpu7.stripped.so" and temporaries */
};

/* Checks that no list of the request has a NULL entry, and that no include
 * or cflag is empty.  Returns 0, or -1 with diag set. */
int inputs_check_lists(const struct bco_request *request, struct diag *diag);
/* The library name without its extension, as the original's splitext: a
 * file name, not too long, not reserved.  NULL with diag set when refused. */
const char *inputs_library_name(struct arena *arena, const char *name, struct diag *diag);
/* Checks the sources: each a readable regular file with a C or C++
 * extension.  Sets *sources to them as the tools get them.  Returns 0, or
 * -1 with diag set. */
int inputs_sources(struct arena *arena, const struct bco_request *request,
                   const char *const **sources, struct diag *diag);
/* The build directory as the tools get it (NULL: "build"); NULL with diag
 * set when it is empty. */
const char *inputs_build_dir(struct arena *arena, const char *build_dir, struct diag *diag);
/* Refuses a build directory holding a wrapper.cpp that does not begin with
 * the generated banner, or a compile_commands.json that its build log does
 * not list (nor has the layout of the ones builds write, for a directory
 * built before logs listed it): the build did not make them, and would
 * overwrite them.  Returns 0, or -1 with diag set. */
int inputs_check_users_files(struct arena *arena, const char *build_dir, struct diag *diag);
/* Records in the build log that the build made compile_commands.json (call
 * it after writing it, holding the directory's lock).  Returns 0, or -1
 * with diag set. */
int inputs_claim_compile_commands(struct arena *arena, const char *build_dir, struct diag *diag);

#endif
