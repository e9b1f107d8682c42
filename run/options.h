/* options.h - the command line of run-custom-op. */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "npy.h"

#define OPTIONS_MAX_OUT_RANK 8

/* One positional argument of the op, in command-line order. */
struct run_input {
	int is_scalar;       /* 1: --scalar VALUE, 0: --in FILE.npy */
	const char *text;    /* the value or the file name */
};

struct run_options {
	int help;
	int version;
	int cores;                      /* 1 or 8; 0 when not given */
	const char *op;                 /* NULL when not given */
	struct run_input *inputs;       /* malloc'd */
	int input_count;
	const char *out;
	int have_out_shape;
	int out_rank;
	uint64_t out_shape[OPTIONS_MAX_OUT_RANK];
	int have_out_dtype;
	enum npy_dtype out_dtype;
	const char *expect;
	double rtol, atol;              /* defaults 1e-5 and 1e-8, as numpy.allclose */
	size_t core_stack;              /* 0 when not given: the runtime's default */
	double timeout;                 /* seconds; 0 when not given: no limit */
	int output_checks;              /* enum rco_output_checks; 0 when not given */
	const char *profile;            /* --profile FILE, or NULL */
	const char *profile_svg;        /* --profile-svg FILE, or NULL */
	const char *library;            /* BUILD_DIR/NAME */
};

/* Parses argv into *options.  Returns 0, or -1 with error set to a usage
 * problem (RCO_ERROR_USAGE; RCO_ERROR_SYSTEM when out of memory; the caller
 * exits 2).  Free with options_free. */
int options_parse(int argc, char **argv, struct run_options *options,
                  struct rco_error *error);
/* Frees what options_parse allocated. */
void options_free(struct run_options *options);
/* Prints the --help text to stdout. */
void options_print_help(void);

#endif
