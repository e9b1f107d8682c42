/* schema.h - PyTorch function schemas: a tokenizer and a recursive-descent parser.
 *
 *   schema   := IDENT '::' IDENT ['.' IDENT] '(' [argument {',' argument}] ')' '->' returns
 *   argument := '*' | type IDENT ['=' default]
 *   type     := ('long' 'long' | IDENT) ['(' alias ')'] {'[' [NUMBER] ']' | '?'}
 *   returns  := type [IDENT] | '(' [type [IDENT] {',' type [IDENT]}] ')'
 *
 * Whitespace of any kind may stand between tokens.  Argument names are
 * unique; a '*' (the keyword-only arguments follow) comes at most once, and
 * before an argument.  A default must be a value of its argument's type, in
 * its range (Tensor: none; int: 32 bits; long long: 64 bits; float: a
 * float32; Scalar: a whole number of 64 bits, or else a float32); then it is
 * dropped.  Types outside the supported vocabulary parse, and are then
 * rejected with the argument's name and position. */
#ifndef SCHEMA_H
#define SCHEMA_H

#include <stddef.h>

struct arena;
struct diag;

/* The argument kinds a kernel can take, each with its C++ type and its
 * marshalling call (see codegen.c). */
enum arg_kind {
	ARG_TENSOR,
	ARG_SCALAR,
	ARG_INT,
	ARG_FLOAT,
	ARG_LONG_LONG
};

struct schema_arg {
	enum arg_kind kind;
	const char *type; /* as written, without whitespace except inside "long long" */
	char *name;
	size_t offset; /* where the type starts in the schema text */
};

struct schema {
	const char *text;      /* the schema as given */
	char *namespace_name;
	char *name;
	char *overload;        /* NULL when there is none */
	size_t name_offset;
	struct schema_arg *args;
	size_t arg_count;
	const char *return_type;
	char *return_name;     /* NULL when the return is unnamed */
};

/* Parses text into *schema (allocated in arena).  Returns 0, or -1 with diag
 * set to a compiler-style message ("schema:COL: error: ...", the line, a caret)
 * and diag->schema_index set to index. */
int schema_parse(struct arena *arena, const char *text, int index, struct schema *schema,
                 struct diag *diag);
/* Sets diag to a compiler-style error pointing at offset in text; returns -1. */
int schema_fail_at(struct diag *diag, const char *text, int index, size_t offset,
                   const char *format, ...) __attribute__((format(printf, 5, 6)));
/* The argument list as "(Tensor x, float b)", one space after each comma. */
char *schema_signature(struct arena *arena, const struct schema *schema);

#endif
