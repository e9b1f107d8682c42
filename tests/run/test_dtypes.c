/* test_dtypes.c - the C views of the device dtypes agree: enum rco_dtype
 * (include/runcustomop.h) numbers them as enum customop_host_dtype
 * (neuron/host_abi.h) does, the library's table (rco_device_dtype) gives
 * each its number and size, and run/npy.c numbers, names and sizes them
 * in the table's order (run/arguments.c relies on it); rco_fill_unwritten
 * fills each dtype with its value. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <neuron/host_abi.h>

#include "../../run/npy.h"
#include "../unit/check.h"
#include "runcustomop.h"

/* run/check.h's (whose include guard is that of ../unit/check.h). */
size_t check_dtype_size(int dtype);

/* The library hands enum rco_dtype numbers to the runtime as they are. */
_Static_assert((int)RCO_UINT8 == (int)CUSTOMOP_HOST_UINT8, "uint8");
_Static_assert((int)RCO_INT8 == (int)CUSTOMOP_HOST_INT8, "int8");
_Static_assert((int)RCO_INT16 == (int)CUSTOMOP_HOST_INT16, "int16");
_Static_assert((int)RCO_INT32 == (int)CUSTOMOP_HOST_INT32, "int32");
_Static_assert((int)RCO_INT64 == (int)CUSTOMOP_HOST_INT64, "int64");
_Static_assert((int)RCO_FLOAT16 == (int)CUSTOMOP_HOST_FLOAT16, "float16");
_Static_assert((int)RCO_FLOAT32 == (int)CUSTOMOP_HOST_FLOAT32, "float32");
_Static_assert((int)RCO_BFLOAT16 == (int)CUSTOMOP_HOST_BFLOAT16, "bfloat16");
_Static_assert(RCO_DTYPE_COUNT == NPY_DTYPE_COUNT, "as many dtypes in npy as in the table");

/* What the table must say, entry by entry. */
static const struct {
	const char *name;
	int code;
	int host_code;
	int size;
} expected[] = {
	{"float32", RCO_FLOAT32, CUSTOMOP_HOST_FLOAT32, 4},
	{"bfloat16", RCO_BFLOAT16, CUSTOMOP_HOST_BFLOAT16, 2},
	{"float16", RCO_FLOAT16, CUSTOMOP_HOST_FLOAT16, 2},
	{"int32", RCO_INT32, CUSTOMOP_HOST_INT32, 4},
	{"int8", RCO_INT8, CUSTOMOP_HOST_INT8, 1},
	{"int64", RCO_INT64, CUSTOMOP_HOST_INT64, 8},
	{"int16", RCO_INT16, CUSTOMOP_HOST_INT16, 2},
	{"uint8", RCO_UINT8, CUSTOMOP_HOST_UINT8, 1},
};
_Static_assert(sizeof expected / sizeof expected[0] == RCO_DTYPE_COUNT, "one line per dtype");

int main(void)
{
	char what[128];
	for (int i = 0; i < RCO_DTYPE_COUNT; i++) {
		const struct rco_dtype_info *info = rco_device_dtype(i);
		snprintf(what, sizeof what, "table entry %d is %s", i, expected[i].name);
		CHECK(info != NULL, what);
		if (!info)
			continue;
		CHECK_STR(info->name, expected[i].name, what);
		snprintf(what, sizeof what, "%s: number %d, the runtime's too", expected[i].name,
		         expected[i].code);
		CHECK_INT(info->code, expected[i].code, what);
		CHECK_INT(info->code, expected[i].host_code, what);
		snprintf(what, sizeof what, "%s: %d bytes", expected[i].name, expected[i].size);
		CHECK_INT(info->size, expected[i].size, what);
		CHECK_INT(check_dtype_size(info->code), expected[i].size, what);
		snprintf(what, sizeof what, "npy's dtype %d is the table's %s, of its size", i,
		         expected[i].name);
		CHECK_STR(npy_dtype_name((enum npy_dtype)i), info->name, what);
		CHECK_INT(npy_dtype_size((enum npy_dtype)i), info->size, what);
		snprintf(what, sizeof what, "npy calls %s a floating dtype exactly when its name says so",
		         expected[i].name);
		CHECK_INT(npy_dtype_is_float((enum npy_dtype)i),
		          strstr(expected[i].name, "float") != NULL, what);
	}
	CHECK(rco_device_dtype(-1) == NULL && rco_device_dtype(RCO_DTYPE_COUNT) == NULL,
	      "no table entry outside 0 .. RCO_DTYPE_COUNT - 1");
	int others = 0;
	for (int code = -2; code < 40; code++) {
		int listed = 0;
		for (int i = 0; i < RCO_DTYPE_COUNT; i++)
			listed |= expected[i].code == code;
		if (!listed && check_dtype_size(code) != 0)
			others++;
	}
	CHECK_INT(others, 0, "no size for a number that is not a device dtype's");

	/* The fill of a new output: a quiet NaN of each floating dtype, bytes 0xA5 else. */
	static const unsigned char filled[RCO_DTYPE_COUNT][8] = {
		{0x00, 0x00, 0xc0, 0x7f}, {0xc0, 0x7f}, {0x00, 0x7e}, {0xa5, 0xa5, 0xa5, 0xa5},
		{0xa5}, {0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5}, {0xa5, 0xa5}, {0xa5},
	};
	for (int i = 0; i < RCO_DTYPE_COUNT; i++) {
		unsigned char bytes[3 * 8 + 1];
		memset(bytes, 0x11, sizeof bytes);
		int size = expected[i].size;
		snprintf(what, sizeof what, "rco_fill_unwritten fills 3 %s elements, no byte more",
		         expected[i].name);
		CHECK_INT(rco_fill_unwritten(expected[i].code, bytes, 3), 0, what);
		int same = bytes[3 * size] == 0x11;
		for (int e = 0; e < 3; e++) {
			unsigned char element[8];
			memcpy(element, filled[i], (size_t)size);
			if (expected[i].code == RCO_FLOAT32 || expected[i].code == RCO_FLOAT16 ||
			    expected[i].code == RCO_BFLOAT16) { /* little-endian bytes above */
				unsigned char host[8];
				if (size == 4) {
					uint32_t value = (uint32_t)element[0] | (uint32_t)element[1] << 8 |
					                 (uint32_t)element[2] << 16 | (uint32_t)element[3] << 24;
					memcpy(host, &value, 4);
				} else {
					uint16_t value = (uint16_t)(element[0] | element[1] << 8);
					memcpy(host, &value, 2);
				}
				memcpy(element, host, (size_t)size);
			}
			same &= memcmp(bytes + e * size, element, (size_t)size) == 0;
		}
		CHECK(same, what);
	}
	unsigned char untouched = 0x11;
	CHECK_INT(rco_fill_unwritten(7, &untouched, 1), RCO_ERROR_USAGE,
	          "rco_fill_unwritten refuses a dtype the device does not have");
	CHECK_INT(untouched, 0x11, "and writes nothing then");
	return check_failures != 0;
}
