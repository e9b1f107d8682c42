/* shell_words.c - bco_split_words: a command line cut into words as a POSIX
 * shell cuts it, with nothing expanded.  One pass, so the time is linear in
 * the length of the text. */
#include <stdlib.h>
#include <string.h>

#include "buildcustomop.h"
#include "diag.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Cuts text into out, each word NUL-terminated; returns the number of
 * words, or -1 at an unclosed quote.  out has room for strlen(text) + 1
 * bytes per the worst case of one-character words. */
static long cut(const char *text, char *out, size_t *used)
{
	size_t length = 0;
	long count = 0;
	int in_word = 0;
	for (const char *p = text; *p; p++) {
		char c = *p;
		if (is_blank(c)) {
			if (in_word)
				out[length++] = '\0';
			in_word = 0;
			continue;
		}
		if (c == '\\' && p[1] == '\n') { /* a line continuation joins, as in sh */
			p++;
			continue;
		}
		if (!in_word)
			count++;
		in_word = 1;
		if (c == '\\' && p[1]) {
			out[length++] = *++p;
		} else if (c == '\'') {
			const char *close = strchr(p + 1, '\'');
			if (!close)
				return -1;
			memcpy(out + length, p + 1, (size_t)(close - p - 1));
			length += (size_t)(close - p - 1);
			p = close;
		} else if (c == '"') {
			for (p++; *p != '"'; p++) {
				if (!*p)
					return -1;
				if (*p == '\\' && p[1] == '\n')
					p++;
				else if (*p == '\\' && p[1] && strchr("$`\"\\", p[1]))
					out[length++] = *++p;
				else
					out[length++] = *p;
			}
		} else {
			out[length++] = c;
		}
	}
	if (in_word)
		out[length++] = '\0';
	*used = length;
	return count;
}

int bco_split_words(const char *text, char ***words, size_t *count, bco_error **error)
{
	struct diag diag;
	diag_init(&diag, NULL);
	if (words)
		*words = NULL;
	if (count)
		*count = 0;
	if (error)
		*error = NULL;
	if (!text || !words || !count) {
		diag.kind = BCO_ERROR_USAGE;
		diag.message = "bco_split_words needs a text and places for the words and their count";
		if (error)
			*error = diag_export(&diag);
		return BCO_ERROR_USAGE;
	}
	/* Each word takes at most its characters and a NUL: the text's length,
	 * plus one for the last word. */
	size_t room = strlen(text) + 1, used = 0;
	char *cut_words = malloc(room);
	long found = cut_words ? cut(text, cut_words, &used) : 0;
	size_t pointers = cut_words && found >= 0 ? ((size_t)found + 1) * sizeof(char *) : 0;
	char **block = cut_words && found >= 0 ? malloc(pointers + used + 1) : NULL;
	if (block) {
		char *strings = (char *)block + pointers;
		memcpy(strings, cut_words, used);
		for (long i = 0; i < found; i++) {
			block[i] = strings;
			strings += strlen(strings) + 1;
		}
		block[found] = NULL;
		*words = block;
		*count = (size_t)found;
	}
	free(cut_words);
	if (block)
		return BCO_OK;
	diag.kind = found < 0 ? BCO_ERROR_INPUT : BCO_ERROR_SYSTEM;
	diag.message = found < 0 ? "no closing quotation" : "out of memory";
	if (error)
		*error = diag_export(&diag);
	return (int)diag.kind;
}
