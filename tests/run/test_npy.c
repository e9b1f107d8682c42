/* test_npy.c - the .npy reader and writer (run/npy.c). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../run/npy.h"
#include "../unit/check.h"

/* A whole file: preamble of the given version, header text as given (no
 * padding added), then data. */
static unsigned char *make_file(int major, const char *header, const void *data,
                                size_t data_length, size_t *length)
{
	size_t header_length = strlen(header);
	size_t length_size = major == 1 ? 2 : 4;
	*length = 8 + length_size + header_length + data_length;
	unsigned char *file = malloc(*length);
	memcpy(file, "\x93NUMPY", 6);
	file[6] = (unsigned char)major;
	file[7] = 0;
	for (size_t i = 0; i < length_size; i++)
		file[8 + i] = (unsigned char)(header_length >> (8 * i));
	memcpy(file + 8 + length_size, header, header_length);
	if (data_length)
		memcpy(file + 8 + length_size + header_length, data, data_length);
	return file;
}

/* Parses a header followed by data; returns the error text ("" on success). */
static const char *parse_error(int major, const char *header, const void *data,
                               size_t data_length)
{
	static struct rco_error error;
	size_t length;
	unsigned char *file = make_file(major, header, data, data_length, &length);
	struct npy_array array;
	int status = npy_parse(file, length, &array, &error);
	free(file);
	if (status == 0) {
		npy_free(&array);
		return "";
	}
	return error.message;
}

static void test_round_trips(void)
{
	static const uint64_t shape[2] = {2, 3};
	for (int d = 0; d < NPY_DTYPE_COUNT; d++) {
		struct npy_array array = {0};
		array.dtype = (enum npy_dtype)d;
		array.rank = 2;
		memcpy(array.shape, shape, sizeof shape);
		CHECK(npy_allocate(&array) == 0, "allocate");
		unsigned char *bytes = array.data;
		size_t size = npy_dtype_size(array.dtype);
		for (size_t i = 0; i < array.count * size; i++)
			bytes[i] = (unsigned char)(i * 37 + 11);
		size_t length;
		unsigned char *file = npy_format(&array, &length);
		char what[128];
		size_t header_end = 10 + (size_t)(file[8] | file[9] << 8);
		snprintf(what, sizeof what, "%s: header padded to 64 bytes, ending in a newline",
		         npy_dtype_name(array.dtype));
		CHECK(header_end % 64 == 0 && file[header_end - 1] == '\n', what);
		struct npy_array back;
		struct rco_error error;
		int status = npy_parse(file, length, &back, &error);
		snprintf(what, sizeof what, "%s: round trip parses", npy_dtype_name(array.dtype));
		CHECK_STR(status == 0 ? "" : error.message, "", what);
		if (status == 0) {
			snprintf(what, sizeof what, "%s: round trip keeps dtype, shape and bytes",
			         npy_dtype_name(array.dtype));
			CHECK(back.dtype == array.dtype && back.rank == 2 && back.shape[0] == 2 &&
			              back.shape[1] == 3 && back.count == 6 &&
			              memcmp(back.data, array.data, 6 * size) == 0,
			      what);
			npy_free(&back);
		}
		free(file);
		npy_free(&array);
	}
}

/* The exact header text the writer produces. */
static void test_written_header(void)
{
	struct npy_array array = {0};
	array.dtype = NPY_FLOAT32;
	array.rank = 1;
	array.shape[0] = 3;
	npy_allocate(&array);
	size_t length;
	unsigned char *file = npy_format(&array, &length);
	char header[160], expected[160];
	snprintf(header, sizeof header, "%.*s", (int)(file[8] | file[9] << 8), (char *)file + 10);
	/* 10 bytes of preamble + 57 of dict + 60 spaces + '\n' = 128 */
	snprintf(expected, sizeof expected, "%s%60s\n",
	         "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "");
	CHECK_STR(header, expected, "float32 header as NumPy writes it, padded to 128 bytes");
	CHECK_INT(length, 128 + 12, "file length is the header plus 3 floats");
	free(file);
	npy_free(&array);

	array.dtype = NPY_BFLOAT16;
	array.rank = 0;
	npy_allocate(&array);
	file = npy_format(&array, &length);
	snprintf(header, sizeof header, "%.*s", (int)(file[8] | file[9] << 8), (char *)file + 10);
	const char *bfloat16_dict = "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (), }";
	CHECK(strncmp(header, bfloat16_dict, strlen(bfloat16_dict)) == 0,
	      "bfloat16 written with the descr 'bfloat16', shape ()");
	struct npy_array back;
	struct rco_error error;
	CHECK(npy_parse(file, length, &back, &error) == 0 && back.rank == 0 && back.count == 1 &&
	              back.dtype == NPY_BFLOAT16,
	      "0-dimensional bfloat16 round trip");
	npy_free(&back);
	free(file);
	npy_free(&array);
}

static void test_byte_orders_and_versions(void)
{
	const unsigned char big_floats[8] = {0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0}; /* 1.0, -2.5 */
	size_t length;
	unsigned char *file = make_file(
		1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", big_floats, 8, &length);
	struct npy_array array;
	struct rco_error error;
	int status = npy_parse(file, length, &array, &error);
	CHECK(status == 0 && array.dtype == NPY_FLOAT32 && npy_get_double(&array, 0) == 1.0 &&
	              npy_get_double(&array, 1) == -2.5,
	      "big-endian float32 read as 1.0, -2.5");
	if (status == 0)
		npy_free(&array);
	free(file);

	const unsigned char big_shorts[4] = {0x12, 0x34, 0xff, 0xfe};
	file = make_file(2, "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \">i2\"}",
	                 big_shorts, 4, &length);
	status = npy_parse(file, length, &array, &error);
	CHECK(status == 0 && array.dtype == NPY_INT16 && npy_get_int(&array, 0) == 0x1234 &&
	              npy_get_int(&array, 1) == -2,
	      "version 2.0, double quotes, keys in any order, big-endian int16");
	if (status == 0)
		npy_free(&array);
	free(file);

	const unsigned char big_bfloat[2] = {0x3f, 0xc0}; /* 1.5 */
	file = make_file(3, "{'descr': '>bfloat16', 'fortran_order': False, 'shape': (1,)}",
	                 big_bfloat, 2, &length);
	status = npy_parse(file, length, &array, &error);
	CHECK(status == 0 && array.dtype == NPY_BFLOAT16 && npy_get_double(&array, 0) == 1.5,
	      "version 3.0, big-endian bfloat16 read as 1.5");
	if (status == 0)
		npy_free(&array);
	free(file);

	const unsigned char bytes[3] = {1, 2, 255};
	CHECK_STR(parse_error(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (3L,), }", bytes, 3),
	          "", "'<u1' and a Python 2 long dimension accepted");
	CHECK_STR(parse_error(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (0, 5), }", NULL, 0),
	          "", "an empty array (shape (0, 5)) accepted");
}

static void test_rejections(void)
{
	const float three[3] = {1, 2, 3};
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", three, 12),
	          "Fortran-order array (fortran_order: True); only C order is read: save "
	          "numpy.ascontiguousarray(a) instead",
	          "Fortran order rejected");
	CHECK_STR(parse_error(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", three, 12),
	          "unsupported dtype '<f8'; the supported ones are float32 '<f4', bfloat16 'bfloat16', "
	          "float16 '<f2', int32 '<i4', int8 '|i1', int64 '<i8', int16 '<i2', uint8 '|u1'",
	          "float64 rejected with the list of dtypes");
	CHECK_STR(parse_error(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }", three, 6),
	          "unsupported dtype '<V2': a raw 2-byte type, which is how ml_dtypes saves bfloat16; "
	          "for bfloat16 write the descr 'bfloat16'",
	          "'<V2' rejected with the bfloat16 advice");
	CHECK_STR(parse_error(1, "{'descr': '|i4', 'fortran_order': False, 'shape': (3,), }", three, 12),
	          "unsupported dtype '|i4': '|' (no byte order) is for 1-byte types; a 4-byte type "
	          "needs '<' or '>'",
	          "'|i4' rejected");
	CHECK_STR(parse_error(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
	                      three, 12),
	          "unsupported dtype: a structured dtype (a list of fields); the supported ones are "
	          "float32 '<f4', bfloat16 'bfloat16', float16 '<f2', int32 '<i4', int8 '|i1', "
	          "int64 '<i8', int16 '<i2', uint8 '|u1'",
	          "structured dtype rejected");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", three, 12),
	          "data is 12 bytes but shape (4,) of float32 needs 16", "too little data rejected");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", three, 12),
	          "data is 12 bytes but shape (2,) of float32 needs 8", "too much data rejected");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, "
	                         "99999999999, 99999999999), }", three, 12),
	          "shape (99999999999, 99999999999, 99999999999) is too large",
	          "an overflowing shape rejected");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False}", three, 12),
	          "malformed header: missing key 'shape'", "missing key");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
	                         "'shape': (3,)}", three, 12),
	          "malformed header: key 'descr' given twice", "duplicate key");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'order': 'C', 'fortran_order': False, "
	                         "'shape': (3,)}", three, 12),
	          "malformed header: unknown key 'order' (the keys are 'descr', 'fortran_order' and "
	          "'shape')",
	          "unknown key");
	CHECK_STR(parse_error(1, "'descr': '<f4'", three, 12),
	          "malformed header: expected '{' at header byte 0, found '''", "no opening brace");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", three, 12),
	          "malformed header: expected True or False for 'fortran_order' at header byte 34, "
	          "found '0'",
	          "fortran_order not a boolean");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,-1)}", three,
	                      12),
	          "malformed header: negative dimension in 'shape'", "negative dimension");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}", three, 12),
	          "malformed header: expected ',' or ')' in 'shape' at header byte 53, found '4'",
	          "dimensions without a comma");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", three,
	                      12),
	          "malformed header: expected only spaces after '}' at header byte 56, found 'x'",
	          "text after the dict");
	CHECK_STR(parse_error(1, "{'descr': '<f4", three, 12),
	          "malformed header: a string is not closed", "unclosed string");
	CHECK_STR(parse_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,", three, 12),
	          "malformed header: expected a dimension, found the end of the header",
	          "header ends inside the shape");
	CHECK_STR(parse_error(1, "{'descr': '\\x3cf4'}", three, 12),
	          "malformed header: escape sequences in strings are not supported (header byte 11)",
	          "escape sequence");
	CHECK_STR(parse_error(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", three, 12),
	          "unsupported .npy version 4.0 (versions 1.0, 2.0 and 3.0 are read)",
	          "version 4.0 rejected");

	struct rco_error error;
	struct npy_array array;
	npy_parse("PK\003\004", 4, &array, &error);
	CHECK_STR(error.message, "not a .npy file: it does not start with \"\\x93NUMPY\"", "not a .npy file");
	npy_parse("\x93NUMPY\x01", 7, &array, &error);
	CHECK_STR(error.message, "truncated: 7 bytes, too short for the .npy preamble", "truncated preamble");
	unsigned char short_header[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 100, 0, '{', ' '};
	npy_parse(short_header, sizeof short_header, &array, &error);
	CHECK_STR(error.message, "truncated header: it declares 100 bytes but 2 follow", "truncated header");
}

/* Every prefix of a valid file, in a buffer of exactly that size so that a
 * sanitizer sees any read past it, is rejected without a crash; so is every
 * single-byte change to a set of values. */
static void test_truncations_and_mutations(void)
{
	struct npy_array array = {0};
	array.dtype = NPY_INT16;
	array.rank = 3;
	array.shape[0] = 2;
	array.shape[1] = 1;
	array.shape[2] = 3;
	npy_allocate(&array);
	size_t length;
	unsigned char *file = npy_format(&array, &length);
	int prefixes_rejected = 1;
	for (size_t cut = 0; cut < length; cut++) {
		unsigned char *prefix = malloc(cut ? cut : 1);
		memcpy(prefix, file, cut);
		struct npy_array back;
		struct rco_error error;
		if (npy_parse(prefix, cut, &back, &error) == 0) {
			prefixes_rejected = 0;
			printf("# prefix of %zu bytes accepted\n", cut);
			npy_free(&back);
		}
		free(prefix);
	}
	CHECK(prefixes_rejected, "every truncation of a valid file is rejected");

	static const unsigned char values[] = {0, 1, 0x7f, 0x80, 0xff, '\'', '"', '(', ')', ',', '{',
	                                       '}', ':', ' ', '9', 'L', '\n', '['};
	int survived = 1;
	for (size_t at = 0; at < length; at++) {
		for (size_t v = 0; v < sizeof values; v++) {
			unsigned char *copy = malloc(length);
			memcpy(copy, file, length);
			copy[at] = values[v];
			struct npy_array back;
			struct rco_error error;
			if (npy_parse(copy, length, &back, &error) == 0) {
				if (back.count * npy_dtype_size(back.dtype) > length)
					survived = 0;
				npy_free(&back);
			} else if (strlen(error.message) == 0) {
				survived = 0;
			}
			free(copy);
		}
	}
	CHECK(survived, "single-byte changes anywhere give an array or an error message");
	free(file);
	npy_free(&array);
}

static void test_files_and_conversions(void)
{
	char path[] = "/tmp/test_npy.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct npy_array array = {0};
	array.dtype = NPY_INT64;
	array.rank = 1;
	array.shape[0] = 2;
	npy_allocate(&array);
	((int64_t *)array.data)[0] = -5;
	((int64_t *)array.data)[1] = INT64_MAX;
	struct rco_error error;
	CHECK(npy_write_file(path, &array, &error) == 0, "write a file");
	struct npy_array back;
	CHECK(npy_read_file(path, &back, &error) == 0 && npy_get_int(&back, 0) == -5 &&
	              npy_get_int(&back, 1) == INT64_MAX,
	      "read it back: -5 and INT64_MAX");
	npy_free(&back);
	npy_free(&array);
	unlink(path);
	CHECK(npy_read_file(path, &back, &error) != 0, "a missing file is an error");
	char expected[256];
	snprintf(expected, sizeof expected, "%s: cannot open: No such file or directory", path);
	CHECK_STR(error.message, expected, "the error names the file");

	CHECK(npy_half_to_float(0x3c00) == 1.0f && npy_half_to_float(0xc100) == -2.5f,
	      "float16 1.0 and -2.5");
	CHECK(npy_half_to_float(0x0001) == ldexpf(1, -24) && isinf(npy_half_to_float(0x7c00)) &&
	              isnan(npy_half_to_float(0x7e00)),
	      "float16 subnormal, infinity and NaN");
	CHECK(npy_bfloat16_to_float(0xbfc0) == -1.5f, "bfloat16 -1.5");
	enum npy_dtype dtype;
	CHECK(npy_dtype_from_name("bfloat16", &dtype) == 0 && dtype == NPY_BFLOAT16 &&
	              npy_dtype_from_name("float64", &dtype) != 0,
	      "dtype names: bfloat16 known, float64 not");
}

int main(void)
{
	test_round_trips();
	test_written_header();
	test_byte_orders_and_versions();
	test_rejections();
	test_truncations_and_mutations();
	test_files_and_conversions();
	return check_failures != 0;
}
