/* arena.h - one allocation region per library call.
 *
 * Everything a call allocates comes from its arena and is released at once
 * when the call ends, so no call can leak.  Running out of memory jumps to
 * the handler the caller registered (arena_init), which frees the arena and
 * reports the error: callers of arena_* never check for NULL. */
#ifndef ARENA_H
#define ARENA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks;
	char *free;             /* the unused end of the newest block */
	size_t left;            /* its size */
	size_t next_block;      /* the size of the next block */
	jmp_buf *out_of_memory; /* longjmp'd to with value 1 when malloc fails */
};

/* Starts an empty arena whose allocation failures longjmp to out_of_memory. */
void arena_init(struct arena *arena, jmp_buf *out_of_memory);
/* Frees every allocation of the arena; the arena can be used again. */
void arena_release(struct arena *arena);
/* Returns size zeroed bytes, aligned for any type. */
void *arena_alloc(struct arena *arena, size_t size);
/* Returns count zeroed elements of size bytes, checking the product for overflow. */
void *arena_array(struct arena *arena, size_t count, size_t size);
/* Returns a copy of the first length bytes of text, NUL-terminated. */
char *arena_strndup(struct arena *arena, const char *text, size_t length);
/* Returns a copy of text. */
char *arena_strdup(struct arena *arena, const char *text);
/* Returns a formatted string. */
char *arena_printf(struct arena *arena, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
/* Returns a formatted string from a va_list. */
char *arena_vprintf(struct arena *arena, const char *format, va_list args);
/* Jumps to the out-of-memory handler. */
_Noreturn void arena_fail(struct arena *arena);

#endif
