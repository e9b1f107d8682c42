/* depfile.c - read the Makefile rules that `-MMD -MP` writes.
 *
 * The text is one rule per logical line: targets, a colon, prerequisites.
 * gcc and clang escape a space in a name as "\ ", a '#' as "\#" and a '$'
 * as "$$", and continue long lines with a backslash-newline.  Anything the
 * compilers never write (a line of words without a colon, a NUL byte, two
 * colons on a line) makes the text not a depfile, which only costs a
 * rebuild. */
#include "depfile.h"

#include "arena.h"
#include "buffer.h"

struct scanner {
	const char *p;
	const char *end;
};

/* A backslash at p starts a line continuation (backslash-newline, with an
 * optional carriage return before the newline). */
static int is_continuation(const struct scanner *s, const char *p)
{
	if (p >= s->end || *p != '\\')
		return 0;
	if (p + 1 < s->end && p[1] == '\n')
		return 1;
	return p + 2 < s->end && p[1] == '\r' && p[2] == '\n';
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Skips spaces, tabs, carriage returns and continuations, not newlines. */
static void skip_blanks(struct scanner *s)
{
	while (s->p < s->end) {
		if (is_blank(*s->p))
			s->p++;
		else if (is_continuation(s, s->p))
			s->p += s->p[1] == '\n' ? 2 : 3;
		else
			break;
	}
}

/* A colon at p separates targets from prerequisites when a blank, a line
 * end or the end of the text follows it ("C:/x" is a name). */
static int is_separator(const struct scanner *s, const char *p)
{
	if (p >= s->end || *p != ':')
		return 0;
	p++;
	return p == s->end || is_blank(*p) || *p == '\n' || is_continuation(s, p);
}

/* Reads one word into word, unescaped.  Returns 0, or -1 on a NUL byte. */
static int read_word(struct scanner *s, struct buffer *word)
{
	word->length = 0;
	word->data[0] = '\0';
	while (s->p < s->end) {
		char c = *s->p;
		if (is_blank(c) || c == '\n' || is_separator(s, s->p))
			break;
		if (c == '\0')
			return -1;
		if (c == '$') {
			/* "$$" is a dollar; a lone '$' is kept as written. */
			buffer_putc(word, '$');
			s->p += s->p + 1 < s->end && s->p[1] == '$' ? 2 : 1;
			continue;
		}
		if (c != '\\') {
			buffer_putc(word, c);
			s->p++;
			continue;
		}
		/* A run of backslashes: before a space, each pair is one
		 * backslash and an odd one escapes the space (as gcc writes
		 * them); before '#' one escapes it; before a line end the last
		 * one continues the line; elsewhere they are literal. */
		const char *run = s->p;
		while (s->p < s->end && *s->p == '\\')
			s->p++;
		size_t count = (size_t)(s->p - run);
		if (s->p < s->end && *s->p == ' ') {
			for (size_t i = 0; i < count / 2; i++)
				buffer_putc(word, '\\');
			if (count % 2 == 0)
				break;
			buffer_putc(word, ' ');
			s->p++;
		} else if (s->p < s->end && *s->p == '#') {
			for (size_t i = 0; i < count / 2; i++)
				buffer_putc(word, '\\');
			buffer_putc(word, '#');
			s->p++;
		} else if (is_continuation(s, s->p - 1)) {
			for (size_t i = 0; i + 1 < count; i++)
				buffer_putc(word, '\\');
			s->p--;
			break;
		} else {
			for (size_t i = 0; i < count; i++)
				buffer_putc(word, '\\');
		}
	}
	return 0;
}

int depfile_parse(struct arena *arena, const char *text, size_t length,
                  struct strvec *prerequisites)
{
	struct scanner s = {text, text + length};
	size_t original_length = prerequisites->length;
	struct buffer word;
	buffer_init(&word, arena);
	size_t rules = 0;
	size_t targets = 0; /* on the current line */
	int in_rule = 0;    /* the current line's colon was seen */

	for (;;) {
		skip_blanks(&s);
		if (s.p == s.end || *s.p == '\n') {
			if (targets && !in_rule)
				goto not_a_depfile;
			if (s.p == s.end)
				break;
			s.p++;
			targets = 0;
			in_rule = 0;
			continue;
		}
		if (*s.p == '#') {
			/* A comment, as in make; a '#' in a name comes escaped. */
			while (s.p < s.end && *s.p != '\n')
				s.p++;
			continue;
		}
		if (is_separator(&s, s.p)) {
			if (in_rule || !targets)
				goto not_a_depfile;
			in_rule = 1;
			rules++;
			s.p++;
			continue;
		}
		const char *before = s.p;
		if (read_word(&s, &word) != 0)
			goto not_a_depfile;
		if (s.p == before) {
			/* Cannot happen with the rules above; never loop forever. */
			goto not_a_depfile;
		}
		if (word.length == 0)
			continue;
		if (in_rule)
			strvec_push(prerequisites, arena_strndup(arena, word.data, word.length));
		else
			targets++;
	}
	if (rules == 0)
		goto not_a_depfile;
	return 0;

not_a_depfile:
	prerequisites->length = original_length;
	prerequisites->items[original_length] = NULL;
	return -1;
}
