/* arguments.h - the op's arguments from --in and --scalar, for libruncustomop.
 *
 * Each --in FILE.npy becomes a tensor argument over the array read from the
 * file, each --scalar V a number (an integer when V is one, else a real),
 * which rco_run converts by the argument's kind and checks. */
#ifndef ARGUMENTS_H
#define ARGUMENTS_H

#include "npy.h"
#include "options.h"
#include "runcustomop.h"

/* Checks that inputs fit op of library (count, --in for a tensor and
 * --scalar for a number), then makes one argument per input in arguments
 * (room for count), reading the arrays of --in into arrays (room for
 * count).  Returns 0, or the status with error set: RCO_ERROR_ARGUMENT (or
 * RCO_ERROR_USAGE) when the command line does not fit the schema,
 * RCO_ERROR_SYSTEM when a file cannot be used or memory runs out.  The caller
 * frees the arrays made so far with npy_free, and the arguments with
 * arguments_free, in every case. */
int arguments_build(const rco_library *library, int op, const struct run_input *inputs, int count,
                    struct npy_array *arrays, struct rco_argument *arguments,
                    struct rco_error *error);
/* Frees what arguments_build allocated for the arguments. */
void arguments_free(struct rco_argument *arguments, int count);
/* Describes array as the device sees a tensor: C-order strides in elements. */
void arguments_tensor_of(const struct npy_array *array, struct rco_tensor *tensor);

#endif
