/* buffer.c - growable byte strings and string lists, allocated in an arena. */
#include "buffer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

void buffer_init(struct buffer *buffer, struct arena *arena)
{
	buffer->arena = arena;
	buffer->data = arena_alloc(arena, 64);
	buffer->length = 0;
	buffer->capacity = 64;
}

static void buffer_reserve(struct buffer *buffer, size_t extra)
{
	if (extra >= SIZE_MAX / 2 - buffer->length)
		arena_fail(buffer->arena);
	size_t needed = buffer->length + extra + 1;
	if (needed <= buffer->capacity)
		return;
	size_t capacity = buffer->capacity * 2;
	while (capacity < needed)
		capacity *= 2;
	char *data = arena_alloc(buffer->arena, capacity);
	memcpy(data, buffer->data, buffer->length + 1);
	buffer->data = data;
	buffer->capacity = capacity;
}

void buffer_append(struct buffer *buffer, const char *bytes, size_t length)
{
	buffer_reserve(buffer, length);
	memcpy(buffer->data + buffer->length, bytes, length);
	buffer->length += length;
	buffer->data[buffer->length] = '\0';
}

void buffer_puts(struct buffer *buffer, const char *text)
{
	buffer_append(buffer, text, strlen(text));
}

void buffer_putc(struct buffer *buffer, char c)
{
	buffer_append(buffer, &c, 1);
}

void buffer_printf(struct buffer *buffer, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	va_list copy;
	va_copy(copy, args);
	/* clang-analyzer 14 loses track of a va_copy of a local va_list. */
	int length = vsnprintf(NULL, 0, format, copy); /* NOLINT(clang-analyzer-valist.Uninitialized) */
	va_end(copy);
	if (length < 0)
		arena_fail(buffer->arena);
	buffer_reserve(buffer, (size_t)length);
	vsnprintf(buffer->data + buffer->length, (size_t)length + 1, format, args);
	buffer->length += (size_t)length;
	va_end(args);
}

/* Characters a shell word may hold without quoting. */
static int shell_safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("@%_+=:,./-", c) != NULL;
}

void buffer_put_shell_word(struct buffer *buffer, const char *word)
{
	const char *p = word;
	while (*p && shell_safe(*p))
		p++;
	if (*word && !*p) {
		buffer_puts(buffer, word);
		return;
	}
	/* Single quotes keep everything literal; a quote itself is closed,
	 * escaped, and reopened. */
	buffer_putc(buffer, '\'');
	for (p = word; *p; p++) {
		if (*p == '\'')
			buffer_puts(buffer, "'\\''");
		else
			buffer_putc(buffer, *p);
	}
	buffer_putc(buffer, '\'');
}

void buffer_put_shell_command(struct buffer *buffer, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			buffer_putc(buffer, ' ');
		buffer_put_shell_word(buffer, argv[i]);
	}
}

void strvec_init(struct strvec *list, struct arena *arena)
{
	list->arena = arena;
	list->capacity = 8;
	list->items = arena_array(arena, list->capacity, sizeof(char *));
	list->length = 0;
}

void strvec_push(struct strvec *list, char *item)
{
	if (list->length + 1 >= list->capacity) {
		if (list->capacity > SIZE_MAX / (2 * sizeof(char *)))
			arena_fail(list->arena);
		char **items = arena_array(list->arena, list->capacity * 2, sizeof(char *));
		memcpy(items, list->items, list->length * sizeof(char *));
		list->items = items;
		list->capacity *= 2;
	}
	list->items[list->length++] = item;
	list->items[list->length] = NULL;
}

void strvec_push_copy(struct strvec *list, const char *item)
{
	strvec_push(list, arena_strdup(list->arena, item));
}

void strvec_extend(struct strvec *list, char *const *items, size_t count)
{
	for (size_t i = 0; i < count; i++)
		strvec_push(list, items[i]);
}

int strvec_contains(const struct strvec *list, const char *text)
{
	for (size_t i = 0; i < list->length; i++)
		if (strcmp(list->items[i], text) == 0)
			return 1;
	return 0;
}

static int compare_items(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strvec_sort(struct strvec *list)
{
	if (list->length > 1)
		qsort(list->items, list->length, sizeof *list->items, compare_items);
}

int strvec_sorted_contains(const struct strvec *list, const char *text)
{
	return list->length > 0 &&
	       bsearch(&text, list->items, list->length, sizeof *list->items, compare_items) != NULL;
}
