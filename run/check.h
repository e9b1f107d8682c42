/* check.h - an op's arguments and output, checked against its schema and made ready for the cores.
 *
 * Scalars travel to the device as 1-element tensors, and the runtime's
 * next_int, next_float and next_longlong reinterpret the bytes without a
 * dtype check, so each number must become exactly the dtype its kind
 * reads: int -> int32, float -> float32, long long -> int64.  A Scalar
 * (at::Scalar) keeps the tensor's type, so an integer becomes int64 (as
 * torch.tensor(3) does) and a real float32. */
#ifndef CHECK_H
#define CHECK_H

#include <neuron/host_abi.h>

#include "opsfile.h"
#include "runcustomop.h"

/* Where the numbers of one call are kept, as 1-element tensors. */
struct check_scalars {
	unsigned char bytes[RCO_MAX_ARGUMENTS][8];
};

/* The bytes of an element of dtype (enum rco_dtype), or 0 for none. */
size_t check_dtype_size(int dtype);
/* Checks that count arguments fit op; returns 0 or RCO_ERROR_ARGUMENT. */
int check_argument_count(const struct op_record *op, int count, struct rco_error *error);
/* How messages name argument index (0-based) of op, called label:
 * "LABEL argument 1 (Tensor x)", or for index -1 "LABEL's output"; written
 * into text (size bytes) as snprintf writes, returning its length. */
size_t check_describe(const struct op_record *op, const char *label, int index, char *text,
                      size_t size);
/* Why rco_accept_tensor refuses a tensor. */
enum check_refusal {
	CHECK_NOT_ON_HOST = 1,
	CHECK_NOT_STRIDED,
	CHECK_NOT_A_DTYPE,
	CHECK_TOO_MANY_DIMENSIONS
};
/* rco_accept_tensor's decision (see runcustomop.h): 0, with *copy set, or
 * an enum check_refusal; formats nothing. */
int check_accept(const struct rco_tensor_description *tensor, int *copy);
/* The refusal problem of tensor as argument of op, called label: returns
 * RCO_ERROR_ARGUMENT with error filled in. */
int check_refuse(const struct op_record *op, const char *label, int argument,
                 const struct rco_tensor_description *tensor, int problem,
                 struct rco_error *error);
/* Checks the arguments and the output against op and fills in args (room
 * for RCO_MAX_ARGUMENTS) and *host_output, with the numbers stored in
 * scalars; the messages name the op as label.  Returns 0 or
 * RCO_ERROR_ARGUMENT (error->argument says which, or -1 for the output). */
int check_arguments(const struct op_record *op, const struct rco_argument *arguments, int count,
                    const struct rco_tensor *output, struct customop_host_tensor *args,
                    struct check_scalars *scalars, struct customop_host_tensor *host_output,
                    const char *label, struct rco_error *error);

#endif
