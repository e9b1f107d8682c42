/* depfile.h - read the Makefile rules that `-MMD -MP` writes. */
#ifndef DEPFILE_H
#define DEPFILE_H

#include <stddef.h>

struct arena;
struct strvec;

/* Parses the text of a depfile (length bytes, may contain anything) and
 * appends every prerequisite of every rule to prerequisites, unescaped
 * ("\ " is a space, "$$" a dollar, backslash-newline a continuation).
 * Phony rules from -MP (a target with no prerequisites) add nothing.
 * Returns 0, or -1 when the text is not a depfile (the step must then be
 * rebuilt). */
int depfile_parse(struct arena *arena, const char *text, size_t length,
                  struct strvec *prerequisites);

#endif
