/* opsfile.h - the schema record a host build writes beside its libraries.
 *
 * BUILD_DIR/NAME.ops: the line "# build-custom-op ops 1", then one line per
 * op in registration order, "NAME<TAB>KINDS<TAB>(SIGNATURE)", where KINDS has
 * one letter per argument (T Tensor, S Scalar, i int, f float, l long long)
 * and SIGNATURE is the argument list as the schema writes it, e.g.
 * "axpby<TAB>TTSfi<TAB>(Tensor x, Tensor y, Scalar a, float b, int n)". */
#ifndef OPSFILE_H
#define OPSFILE_H

#include <stddef.h>

#define OPSFILE_HEADER "# build-custom-op ops 1"
#define OPSFILE_ERROR_SIZE 1024

struct op_record {
	char *name;
	char *kinds;       /* "" for an op without arguments */
	char *signature;   /* "(Tensor x, float b)" */
};

struct ops_file {
	struct op_record *ops;
	int count;
};

/* Parses the text of a record; errors read "LINE: problem".  Returns 0, or
 * -1 with error set and *ops empty. */
int ops_parse(const char *text, size_t length, struct ops_file *ops,
              char error[OPSFILE_ERROR_SIZE]);
/* Reads path; returns 0, -1 with error ("PATH:LINE: problem" or
 * "PATH: problem"), or 1 when the file does not exist. */
int ops_read_file(const char *path, struct ops_file *ops, char error[OPSFILE_ERROR_SIZE]);
/* The op named name, or NULL. */
const struct op_record *ops_find(const struct ops_file *ops, const char *name);
/* Writes the names of all ops as "a, b, c" into out. */
void ops_list_names(const struct ops_file *ops, char *out, size_t out_size);
/* Writes argument index's part of the signature ("Scalar a") into out, or
 * "argument N" (1-based) when the signature cannot be split into the kinds. */
void op_argument_text(const struct op_record *op, int index, char *out, size_t out_size);
/* The name of a kind letter: "Tensor", "Scalar", "int", "float", "long long". */
const char *op_kind_name(char kind);
/* Frees what ops_parse allocated. */
void ops_free(struct ops_file *ops);

#endif
