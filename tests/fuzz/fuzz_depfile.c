/* fuzz_depfile.c - the -MMD depfile reader on arbitrary bytes, as a
 * compiler, a full disk or a stray editor may leave the file. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "depfile.h"
#include "fuzz.h"

/* Static: the arena changes between setjmp and a longjmp back to it. */
static struct arena arena;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_copy(data, size, 0);
	if (!text)
		return 0;
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		free(text);
		return 0;
	}
	arena_init(&arena, &out_of_memory);
	struct strvec prerequisites;
	strvec_init(&prerequisites, &arena);
	if (depfile_parse(&arena, text, size, &prerequisites) == 0) {
		/* Each prerequisite becomes a path to stat: a whole C string. */
		for (size_t i = 0; i < prerequisites.length; i++)
			(void)strlen(prerequisites.items[i]);
		if (prerequisites.length && prerequisites.items[prerequisites.length] != NULL)
			abort();
	}
	arena_release(&arena);
	free(text);
	return 0;
}
