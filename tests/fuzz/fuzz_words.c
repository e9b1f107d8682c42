/* fuzz_words.c - bco_split_words on any text.  The oracle: the words,
 * each quoted back for a shell (buffer_put_shell_word, as -n prints
 * commands) and joined by spaces, split again into the same words. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "buildcustomop.h"
#include "fuzz.h"

/* Static: the arena changes between setjmp and a longjmp back to it. */
static struct arena arena;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_copy(data, size, 1);
	if (!text)
		return 0;
	char **words = NULL, **again = NULL;
	size_t count = 0, again_count = 0;
	bco_error *error = NULL;
	int kind = bco_split_words(text, &words, &count, &error);
	if (kind != BCO_OK) {
		/* Only an unclosed quote (or no memory) is refused, with a message. */
		if (!error || (kind != BCO_ERROR_INPUT && kind != BCO_ERROR_SYSTEM) || words || count)
			abort();
		bco_error_free(error);
		free(text);
		return 0;
	}
	if (words[count] != NULL)
		abort();
	jmp_buf out_of_memory;
	if (setjmp(out_of_memory)) {
		arena_release(&arena);
		bco_free(words);
		free(text);
		return 0;
	}
	arena_init(&arena, &out_of_memory);
	struct buffer quoted;
	buffer_init(&quoted, &arena);
	for (size_t i = 0; i < count; i++) {
		if (i)
			buffer_putc(&quoted, ' ');
		buffer_put_shell_word(&quoted, words[i]);
	}
	if (bco_split_words(quoted.data, &again, &again_count, NULL) != BCO_OK || again_count != count)
		abort();
	for (size_t i = 0; i < count; i++)
		if (strcmp(words[i], again[i]) != 0)
			abort();
	bco_free(again);
	arena_release(&arena);
	bco_free(words);
	free(text);
	return 0;
}
