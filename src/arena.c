/* arena.c - one allocation region per library call. */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small allocations are cut from blocks, each twice the size of the one
 * before (4 KiB to 1 MiB), so a call that parses thousands of schemas makes
 * a few dozen calls to calloc, not hundreds of thousands.  A large one gets
 * a chunk of its own.  Under AddressSanitizer every allocation is its own
 * chunk, so that an overrun of one is caught at its end. */
struct arena_chunk {
	struct arena_chunk *next;
	max_align_t data[];
};

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_CHUNK_PER_ALLOCATION 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_CHUNK_PER_ALLOCATION 1
#endif
#endif

enum {
	FIRST_BLOCK = 4096,
	LAST_BLOCK = 1 << 20,
	/* Larger allocations get their own chunk. */
	OWN_CHUNK = LAST_BLOCK / 4,
};

void arena_init(struct arena *arena, jmp_buf *out_of_memory)
{
	arena->chunks = NULL;
	arena->free = NULL;
	arena->left = 0;
	arena->next_block = FIRST_BLOCK;
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
	arena_init(arena, arena->out_of_memory);
}

_Noreturn void arena_fail(struct arena *arena)
{
	longjmp(*arena->out_of_memory, 1);
}

/* A new chunk of size bytes, kept in the arena's list: zeroed when zeroed
 * is set.  A block is not: arena_alloc zeroes each allocation cut from it,
 * so that the pages of a block's unused end are never touched (calloc
 * would write them all, and fault each one in, at every call). */
static void *new_chunk(struct arena *arena, size_t size, int zeroed)
{
	if (size > SIZE_MAX - sizeof(struct arena_chunk))
		arena_fail(arena);
	size += sizeof(struct arena_chunk);
	struct arena_chunk *chunk = zeroed ? calloc(1, size) : malloc(size);
	if (!chunk)
		arena_fail(arena);
	chunk->next = arena->chunks;
	arena->chunks = chunk;
	return chunk->data;
}

void *arena_alloc(struct arena *arena, size_t size)
{
#ifdef ARENA_CHUNK_PER_ALLOCATION
	return new_chunk(arena, size, 1);
#else
	const size_t alignment = _Alignof(max_align_t);
	if (size > OWN_CHUNK)
		return new_chunk(arena, size, 1);
	size = size ? (size + alignment - 1) / alignment * alignment : alignment;
	if (size > arena->left) {
		size_t block = arena->next_block;
		while (block < size)
			block *= 2;
		arena->free = new_chunk(arena, block, 0);
		arena->left = block;
		if (arena->next_block < LAST_BLOCK)
			arena->next_block *= 2;
	}
	void *memory = arena->free;
	arena->free += size;
	arena->left -= size;
	return memset(memory, 0, size);
#endif
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
