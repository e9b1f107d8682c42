/* opsfile.h - the schema record a host build writes beside its libraries.
 *
 * BUILD_DIR/NAME.ops, version 2, written by build-custom-op --target host
 * only once every library of the build has been linked:
 *
 *   # build-custom-op ops 2
 *   cores 8
 *   library relu_cpu0.so 3f1c0a9e5b7d2c41
 *   ...                                        (one line per core library, in core order)
 *   library relu_cpu7.so 0b9e2d6f4a1c8e37
 *   relu<TAB>T<TAB>(Tensor x)                  (one line per op, in registration order)
 *
 * "cores" is the layout: 1 (NAME.so) or 8 (NAME_cpu0.so .. NAME_cpu7.so).
 * Each "library" line names a core library (its file name, for readers)
 * and its id (src/library_id.h: a hash of the file's bytes), which the
 * runner checks against the file it loads.  Each op line is
 * "NAME<TAB>KINDS<TAB>(SIGNATURE)", where KINDS has one letter per argument
 * (T Tensor, S Scalar, i int, f float, l long long) and SIGNATURE is the
 * argument list as the schema writes it, e.g.
 * "axpby<TAB>TTSfi<TAB>(Tensor x, Tensor y, Scalar a, float b, int n)".
 * Version 1 (the header "# build-custom-op ops 1", then op lines) had no
 * layout and no ids; it is recognised, and refused by the runner. */
#ifndef OPSFILE_H
#define OPSFILE_H

#include <stddef.h>

#include "runcustomop.h"

#define OPSFILE_HEADER "# build-custom-op ops 2"
#define OPSFILE_HEADER_1 "# build-custom-op ops 1"
#define OPSFILE_MAX_LIBRARIES 8
#define OPSFILE_ID_SIZE 17

struct library_record {
	char *name;                  /* the file name the build gave it */
	char id[OPSFILE_ID_SIZE];    /* 16 hex digits */
};

struct op_record {
	char *name;
	char *kinds;       /* "" for an op without arguments */
	char *signature;   /* "(Tensor x, float b)" */
};

struct ops_file {
	int version;                 /* 2, or 1 for a record of an earlier build-custom-op */
	int cores;                   /* 1 or 8 (0 in version 1) */
	struct library_record libraries[OPSFILE_MAX_LIBRARIES];
	int library_count;           /* cores */
	struct op_record *ops;
	int count;
};

/* Parses the text of a record (version 2, or 1 with only ops); errors read
 * "LINE: problem".  Returns 0, or -1 with error set (RCO_ERROR_BUILD) and
 * *ops empty. */
int ops_parse(const char *text, size_t length, struct ops_file *ops,
              struct rco_error *error);
/* Reads path; returns 0, -1 with error set (RCO_ERROR_BUILD; "PATH:LINE:
 * problem" or "PATH: problem"), or 1 when the file does not exist. */
int ops_read_file(const char *path, struct ops_file *ops, struct rco_error *error);
/* The op named name, or NULL. */
const struct op_record *ops_find(const struct ops_file *ops, const char *name);
/* Writes the names of all ops as "a, b, c" into out. */
void ops_list_names(const struct ops_file *ops, char *out, size_t out_size);
/* Writes argument index's part of the signature ("Scalar a") into out, or
 * "argument N" (1-based) when the signature cannot be split into the kinds. */
void op_argument_text(const struct op_record *op, int index, char *out, size_t out_size);
/* Frees what ops_parse allocated. */
void ops_free(struct ops_file *ops);

#endif
