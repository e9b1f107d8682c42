/* fuzz_schema.c - the schema tokenizer and parser on arbitrary text. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "fuzz.h"
#include "schema.h"

/* Static: the arena changes between setjmp and a longjmp back to it. */
static struct arena arena;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* schema_parse reads a C string: the input, NUL-terminated. */
	char *text = fuzz_copy(data, size, 1);
	if (!text)
		return 0;
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		free(text);
		return 0;
	}
	arena_init(&arena, &out_of_memory);
	struct diag diag;
	diag_init(&diag, &arena);
	struct schema schema;
	if (schema_parse(&arena, text, 3, &schema, &diag) == 0) {
		/* What codegen reads of an accepted schema must be whole strings. */
		if (!schema.namespace_name || !schema.name || !schema.return_type)
			abort();
		for (size_t i = 0; i < schema.arg_count; i++)
			if (!schema.args[i].name || !schema.args[i].type ||
			    schema.args[i].offset >= size)
				abort();
		(void)strlen(schema_signature(&arena, &schema));
	} else {
		/* A rejection always says why, and about this schema. */
		if (!diag.message || !*diag.message || diag.schema_index != 3)
			abort();
	}
	arena_release(&arena);
	free(text);
	return 0;
}
