/* buffer.h - growable byte strings and string lists, allocated in an arena. */
#ifndef BUFFER_H
#define BUFFER_H

#include <stdarg.h>
#include <stddef.h>

struct arena;

/* A growable, always NUL-terminated byte string. */
struct buffer {
	struct arena *arena;
	char *data;
	size_t length;
	size_t capacity;
};

/* A growable, always NULL-terminated list of strings (an argv). */
struct strvec {
	struct arena *arena;
	char **items;
	size_t length;
	size_t capacity;
};

/* Starts an empty buffer in arena. */
void buffer_init(struct buffer *buffer, struct arena *arena);
/* Appends length bytes. */
void buffer_append(struct buffer *buffer, const char *bytes, size_t length);
/* Appends a NUL-terminated string. */
void buffer_puts(struct buffer *buffer, const char *text);
/* Appends one character. */
void buffer_putc(struct buffer *buffer, char c);
/* Appends formatted text. */
void buffer_printf(struct buffer *buffer, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends word quoted so that a POSIX shell reads it back as one word. */
void buffer_put_shell_word(struct buffer *buffer, const char *word);
/* Appends argv as a shell command line: words quoted, separated by spaces. */
void buffer_put_shell_command(struct buffer *buffer, char *const *argv);

/* Starts an empty list in arena. */
void strvec_init(struct strvec *list, struct arena *arena);
/* Appends item (not copied). */
void strvec_push(struct strvec *list, char *item);
/* Appends a copy of item. */
void strvec_push_copy(struct strvec *list, const char *item);
/* Appends every word of a list of count items (not copied). */
void strvec_extend(struct strvec *list, char *const *items, size_t count);
/* Returns 1 when some item equals text. */
int strvec_contains(const struct strvec *list, const char *text);
/* Sorts the items in strcmp order. */
void strvec_sort(struct strvec *list);
/* strvec_contains for a list strvec_sort sorted (a binary search). */
int strvec_sorted_contains(const struct strvec *list, const char *text);

#endif
