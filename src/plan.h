/* plan.h - the steps of one build: their commands, inputs, outputs and order.
 *
 * Steps are laid out in a fixed order: one compile per user source (in
 * source order), the wrapper compile, the link(s), then the pack(s).  Each
 * link waits for every compile; each pack waits for its own link only. */
#ifndef PLAN_H
#define PLAN_H

#include <stddef.h>

#include "exec.h"

struct arena;
struct diag;
struct toolchain;

/* What the up-to-date check needs to know of a step besides struct step. */
struct step_files {
	const char *source;  /* a compile's source, else NULL */
	char *depfile;       /* a compile's -MMD output, else NULL */
	char **inputs;       /* the files the step reads (besides the depfile's) */
	size_t input_count;
};

struct plan {
	struct step *steps;
	struct step_files *files;
	size_t step_count;
	size_t compile_count;  /* steps[0 .. compile_count) are the compiles, wrapper last */
	char *wrapper_source;  /* <build>/wrapper.cpp */
	char **artifacts;      /* what the build hands back: packed or linked libraries */
	size_t artifact_count;
};

/* Lays out the steps of building name in build_dir.  Refuses sources whose
 * objects would overwrite each other or the wrapper's.  Returns 0, or -1
 * with diag set. */
int plan_build(struct arena *arena, const struct toolchain *toolchain, const char *build_dir,
               const char *name, const char *const *sources, size_t source_count,
               int multicore, int pack, struct plan *plan, struct diag *diag);

#endif
