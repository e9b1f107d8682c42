/* plan.h - the steps of one build: their commands, inputs, outputs and order.
 *
 * Steps are laid out in a fixed order: one compile per user source (in
 * source order), the wrapper compile, the link(s), then the pack(s).  Each
 * link waits for every compile; each pack waits for its own link only. */
#ifndef PLAN_H
#define PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "exec.h"

struct arena;
struct diag;
struct toolchain;

/* What the up-to-date check needs to know of a step besides struct step. */
struct step_files {
	const char *source;  /* a compile's source, else NULL */
	char *depfile;       /* a compile's -MMD output, else NULL */
	char **inputs;       /* the files the step reads besides the depfile's: a compile's
	                        source, every file named on a link command (the objects, the
	                        SDK's archives and objects, the linker spec directory), a
	                        pack's library */
	size_t input_count;
	int changed;         /* set by the caller: an input changes before the step runs */
	/* Kept by state.c from the check to the end of the step. */
	char **headers;      /* what the depfile named before the step ran */
	size_t header_count;
	int headers_read;
	uint64_t before_hash;  /* the inputs' fingerprint when the step started */
	int before_valid;
	struct timespec started; /* the file system's time then */
	int started_inclusive;   /* that time had not passed when the step was spawned: a
	                            file dated at it may have been written after */
};

struct plan {
	struct step *steps;
	struct step_files *files;
	size_t step_count;
	size_t compile_count;  /* steps[0 .. compile_count) are the compiles, wrapper last */
	char *wrapper_source;  /* <build>/wrapper.cpp */
	char **artifacts;      /* what the build hands back: packed or linked libraries */
	size_t artifact_count;
	size_t build_dir_length; /* every output is <build_dir>/<name> */
};

/* Lays out the steps of building name in build_dir.  Refuses sources whose
 * objects would overwrite each other or the wrapper's.  Returns 0, or -1
 * with diag set. */
int plan_build(struct arena *arena, const struct toolchain *toolchain, const char *build_dir,
               const char *name, const char *const *sources, size_t source_count,
               int multicore, int pack, struct plan *plan, struct diag *diag);
/* The name of output (a path the plan made) in the build directory. */
const char *plan_output_name(const struct plan *plan, const char *output);

#endif
