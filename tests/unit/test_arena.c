/* test_arena.c - the arena: zeroed, aligned allocations that never overlap,
 * small ones cut from shared blocks and large ones apart, all released at
 * once and usable again; a failed allocation jumps to the handler. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "check.h"

static jmp_buf out_of_memory;

/* Allocates count blocks of sizes 0, 1, ... (cycling to max_size), checks
 * each is zeroed and aligned, fills each with its own byte, and checks at
 * the end that no fill overwrote another: the allocations do not overlap. */
static int allocations_hold(struct arena *arena, size_t count, size_t max_size)
{
	unsigned char **blocks = arena_array(arena, count, sizeof *blocks);
	size_t *sizes = arena_array(arena, count, sizeof *sizes);
	int ok = 1;
	for (size_t i = 0; i < count; i++) {
		sizes[i] = i % (max_size + 1);
		blocks[i] = arena_alloc(arena, sizes[i]);
		if (!blocks[i] || (uintptr_t)blocks[i] % _Alignof(max_align_t) != 0)
			ok = 0;
		for (size_t b = 0; b < sizes[i]; b++)
			if (blocks[i][b] != 0)
				ok = 0;
		memset(blocks[i], (int)(i % 251) + 1, sizes[i]);
	}
	for (size_t i = 0; i < count; i++)
		for (size_t b = 0; b < sizes[i]; b++)
			if (blocks[i][b] != (unsigned char)(i % 251 + 1))
				ok = 0;
	return ok;
}

int main(void)
{
	struct arena arena;
	volatile int jumped = 0;
	arena_init(&arena, &out_of_memory);
	if (setjmp(out_of_memory)) {
		if (jumped++) {
			puts("not ok - out of memory");
			return 1;
		}
		CHECK(1, "an allocation past SIZE_MAX jumps to the out-of-memory handler");
		arena_release(&arena);
		CHECK(allocations_hold(&arena, 100, 64), "and the arena works after it is released");
		arena_release(&arena);
		return check_failures != 0;
	}

	CHECK(allocations_hold(&arena, 20000, 100),
	      "20,000 small allocations: zeroed, aligned, none overlapping another");
	CHECK(allocations_hold(&arena, 40, 300000),
	      "allocations of up to 300 KB, some cut from blocks and some apart, likewise");
	char *text = arena_strndup(&arena, "relu(Tensor x)", 4);
	CHECK_STR(text, "relu", "a copy of part of a string is NUL-terminated");
	CHECK_STR(arena_printf(&arena, "%s_%d", text, 7), "relu_7", "a formatted string");
	CHECK(arena_alloc(&arena, 0) != NULL, "an allocation of no bytes is not NULL");
	arena_release(&arena);
	CHECK(allocations_hold(&arena, 5000, 4000), "after a release the arena is used again");
	arena_alloc(&arena, SIZE_MAX - 8);
	puts("not ok - an allocation past SIZE_MAX returned");
	arena_release(&arena);
	return 1;
}
