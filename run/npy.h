/* npy.h - NumPy .npy arrays: read versions 1.0, 2.0 and 3.0, write 1.0.
 *
 * Eight element types, those of the device: float32 '<f4', bfloat16,
 * float16 '<f2', int32 '<i4', int8 '|i1', int64 '<i8', int16 '<i2' and
 * uint8 '|u1'.  NumPy has no bfloat16; ml_dtypes saves it as '<V2', which
 * any 2-byte raw type also is, so this module writes the descr 'bfloat16'
 * (little-endian) and reads back 'bfloat16', '<bfloat16' and '>bfloat16'.
 * Either byte order is read and converted to the host's; C order only.
 * The parser works on a memory buffer and never reads outside it. */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>
#include <stdint.h>

#include "runcustomop.h"

/* NumPy itself allows 64 dimensions; no device tensor has more than 8. */
#define NPY_MAX_RANK 32

enum npy_dtype {
	NPY_FLOAT32,
	NPY_BFLOAT16,
	NPY_FLOAT16,
	NPY_INT32,
	NPY_INT8,
	NPY_INT64,
	NPY_INT16,
	NPY_UINT8
};
#define NPY_DTYPE_COUNT 8

/* An array in host byte order, C order; data holds count elements. */
struct npy_array {
	enum npy_dtype dtype;
	int rank;                       /* 0 for a scalar array, shape () */
	uint64_t shape[NPY_MAX_RANK];
	size_t count;                   /* product of shape */
	void *data;                     /* malloc'd by this module; NULL when count is 0 */
};

/* The NumPy name of dtype: "float32", "bfloat16", ... */
const char *npy_dtype_name(enum npy_dtype dtype);
/* Looks up a NumPy name; returns 0, or -1 when name is none of the eight. */
int npy_dtype_from_name(const char *name, enum npy_dtype *dtype);
/* Bytes per element of dtype. */
size_t npy_dtype_size(enum npy_dtype dtype);
/* Returns 1 for float32, bfloat16 and float16, 0 for the integer types. */
int npy_dtype_is_float(enum npy_dtype dtype);

/* Parses a whole .npy file held in bytes into *array (data copied).  Returns
 * 0, or -1 with error set (RCO_ERROR_SYSTEM) to the problem (no file name)
 * and *array empty. */
int npy_parse(const void *bytes, size_t length, struct npy_array *array,
              struct rco_error *error);
/* Reads path as npy_parse reads bytes, but as it goes: the preamble, then
 * the header it declares, then the data the header declares, never more
 * (--in /dev/zero reads 12 bytes); a regular file's size is checked
 * before its data is read.  An error starts with "PATH: ". */
int npy_read_file(const char *path, struct npy_array *array, struct rco_error *error);
/* Serialises array as a version 1.0 file in host byte order, the header
 * padded with spaces to a multiple of 64 bytes and ending in '\n'.  Returns
 * a malloc'd buffer and its length in *length, or NULL when out of memory. */
unsigned char *npy_format(const struct npy_array *array, size_t *length);
/* Writes array to path by the rule of src/output_file.h (a regular file
 * atomically, a device or FIFO through, never deleted); returns 0, or -1
 * with error set (RCO_ERROR_SYSTEM; "cannot write PATH: REASON"). */
int npy_write_file(const char *path, const struct npy_array *array, struct rco_error *error);
/* Allocates zeroed data for array's dtype and shape (sets count); returns 0 or -1. */
int npy_allocate(struct npy_array *array);
/* Frees the data and empties array. */
void npy_free(struct npy_array *array);

/* Element index of array (flat, C order) as a double: floats widened,
 * integers converted (int64 beyond 2^53 rounds). */
double npy_get_double(const struct npy_array *array, size_t index);
/* Element index of an integer array as int64 (uint8 widened). */
int64_t npy_get_int(const struct npy_array *array, size_t index);
/* Converts a float16 bit pattern to float. */
float npy_half_to_float(uint16_t bits);
/* Converts a bfloat16 bit pattern to float. */
float npy_bfloat16_to_float(uint16_t bits);

#endif
