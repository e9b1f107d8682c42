/* arguments.h - the op's arguments from --in and --scalar, checked against its schema. */
#ifndef ARGUMENTS_H
#define ARGUMENTS_H

#include "npy.h"
#include "opsfile.h"
#include "options.h"

#define ARGUMENTS_ERROR_SIZE 1024

/* Checks inputs against op's kinds and makes one array per argument in
 * arrays (which has room for count): tensors read from their files,
 * scalars as 1-element arrays of the kind's dtype.  Returns 0; 2 with error
 * set when the command line does not fit the schema (a usage error); 1 when
 * a file cannot be used.  The caller frees the arrays made so far with
 * npy_free in every case. */
int arguments_build(const struct op_record *op, const struct run_input *inputs, int count,
                    struct npy_array *arrays, char error[ARGUMENTS_ERROR_SIZE]);

#endif
