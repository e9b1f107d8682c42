/* fuzz_npy.c - the .npy reader of run-custom-op on arbitrary bytes, with a
 * round trip: an accepted array, written and read again, is the same array. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "npy.h"

static void check_same(const struct npy_array *a, const struct npy_array *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank || a->count != b->count)
		abort();
	for (int i = 0; i < a->rank; i++)
		if (a->shape[i] != b->shape[i])
			abort();
	size_t bytes = a->count * npy_dtype_size(a->dtype);
	if (bytes && memcmp(a->data, b->data, bytes) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *bytes = fuzz_copy(data, size, 0);
	if (!bytes)
		return 0;
	static struct rco_error error;
	struct npy_array array;
	if (npy_parse(bytes, size, &array, &error) != 0) {
		/* A rejection says why and leaves nothing to free. */
		if (!error.message[0] || memchr(error.message, '\0', sizeof error.message) == NULL ||
		    array.data)
			abort();
		free(bytes);
		return 0;
	}
	if (array.rank < 0 || array.rank > NPY_MAX_RANK || (array.count && !array.data))
		abort();
	size_t formatted_length;
	unsigned char *formatted = npy_format(&array, &formatted_length);
	if (formatted) {
		struct npy_array again;
		if (npy_parse(formatted, formatted_length, &again, &error) != 0)
			abort();
		check_same(&array, &again);
		npy_free(&again);
		free(formatted);
	}
	npy_free(&array);
	free(bytes);
	return 0;
}
