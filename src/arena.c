/* arena.c - one allocation region per library call. */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each allocation is its own chunk: simple, and realloc-free growth in
 * buffer.c keeps the number of chunks logarithmic in a buffer's size. */
struct arena_chunk {
	struct arena_chunk *next;
	max_align_t data[];
};

void arena_init(struct arena *arena, jmp_buf *out_of_memory)
{
	arena->chunks = NULL;
	arena->out_of_memory = out_of_memory;
}

void arena_release(struct arena *arena)
{
	struct arena_chunk *chunk = arena->chunks;
	while (chunk) {
		struct arena_chunk *next = chunk->next;
		free(chunk);
		chunk = next;
	}
	arena->chunks = NULL;
}

_Noreturn void arena_fail(struct arena *arena)
{
	longjmp(*arena->out_of_memory, 1);
}

void *arena_alloc(struct arena *arena, size_t size)
{
	if (size > SIZE_MAX - sizeof(struct arena_chunk))
		arena_fail(arena);
	struct arena_chunk *chunk = calloc(1, sizeof(struct arena_chunk) + size);
	if (!chunk)
		arena_fail(arena);
	chunk->next = arena->chunks;
	arena->chunks = chunk;
	return chunk->data;
}

void *arena_array(struct arena *arena, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		arena_fail(arena);
	return arena_alloc(arena, count * size);
}

char *arena_strndup(struct arena *arena, const char *text, size_t length)
{
	if (length == SIZE_MAX)
		arena_fail(arena);
	char *copy = arena_alloc(arena, length + 1);
	memcpy(copy, text, length);
	copy[length] = '\0';
	return copy;
}

char *arena_strdup(struct arena *arena, const char *text)
{
	return arena_strndup(arena, text, strlen(text));
}

char *arena_vprintf(struct arena *arena, const char *format, va_list args)
{
	va_list copy;
	va_copy(copy, args);
	int length = vsnprintf(NULL, 0, format, copy);
	va_end(copy);
	if (length < 0)
		arena_fail(arena);
	char *text = arena_alloc(arena, (size_t)length + 1);
	vsnprintf(text, (size_t)length + 1, format, args);
	return text;
}

char *arena_printf(struct arena *arena, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	char *text = arena_vprintf(arena, format, args);
	va_end(args);
	return text;
}
