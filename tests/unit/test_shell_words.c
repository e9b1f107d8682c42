/* test_shell_words.c - bco_split_words: words as a POSIX shell cuts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildcustomop.h"
#include "check.h"

/* The words of text as "<w1><w2>...", or "error KIND: MESSAGE". */
static const char *split(const char *text)
{
	static char shown[4096];
	char **words = NULL;
	size_t count = 0;
	bco_error *error = NULL;
	int kind = bco_split_words(text, &words, &count, &error);
	if (kind != BCO_OK) {
		snprintf(shown, sizeof shown, "error %d: %s", kind, bco_error_message(error));
	} else {
		shown[0] = '\0';
		for (size_t i = 0; i < count; i++)
			snprintf(shown + strlen(shown), sizeof shown - strlen(shown), "<%s>", words[i]);
		if (words[count] != NULL)
			snprintf(shown, sizeof shown, "the list does not end with NULL");
	}
	bco_free(words);
	bco_error_free(error);
	return shown;
}

int main(void)
{
	CHECK_STR(split(""), "", "no text, no word");
	CHECK_STR(split(" \t\n "), "", "blanks only, no word");
	CHECK_STR(split("ccache"), "<ccache>", "one word");
	CHECK_STR(split("  distcc \t -j4\n"), "<distcc><-j4>", "blanks of any kind and number separate");
	CHECK_STR(split("'/opt/my tools/cc' -x"), "</opt/my tools/cc><-x>", "single quotes keep blanks");
	CHECK_STR(split("'a\\b\"c'"), "<a\\b\"c>", "and backslashes and double quotes");
	CHECK_STR(split("\"a b\" \"$x `y` \\$ \\` \\\" \\\\ \\q\""), "<a b><$x `y` $ ` \" \\ \\q>",
	          "in double quotes a backslash escapes only $ ` \" \\");
	CHECK_STR(split("a\\ b \\'c \\\\"), "<a b><'c><\\>", "outside quotes a backslash escapes anything");
	CHECK_STR(split("a\\\nb \"c\\\nd\""), "<ab><cd>", "a backslash-newline joins lines");
	CHECK_STR(split("end\\"), "<end\\>", "a final backslash stays, as in sh");
	CHECK_STR(split("a'b'\"c\"d"), "<abcd>", "quoted and plain parts make one word");
	CHECK_STR(split("'' \"\" x"), "<><><x>", "empty quotes are empty words");
	CHECK_STR(split("$HOME ~ * # `x` $(y)"), "<$HOME><~><*><#><`x`><$(y)>", "nothing is expanded");
	CHECK_STR(split("'open"), "error 1: no closing quotation", "an unclosed single quote");
	CHECK_STR(split("a \"open"), "error 1: no closing quotation", "an unclosed double quote");
	CHECK_STR(split("\"a\\\""), "error 1: no closing quotation", "an escaped closing quote");

	char **words = (char **)1;
	size_t count = 1;
	bco_error *error = NULL;
	CHECK_INT(bco_split_words(NULL, &words, &count, &error), BCO_ERROR_USAGE, "no text is a usage error");
	CHECK(words == NULL && count == 0 && error != NULL, "and gives no words, and an error");
	bco_error_free(error);

	size_t word_count = 1024 * 1024, size = 3 * word_count;
	char *big = malloc(size + 1);
	if (!big)
		return 1;
	for (size_t i = 0; i < size; i += 3)
		memcpy(big + i, "ab ", 3);
	big[size] = '\0';
	CHECK_INT(bco_split_words(big, &words, &count, NULL), BCO_OK, "3 MiB of words split");
	CHECK(count == word_count && strcmp(words[count - 1], "ab") == 0, "into every word");
	bco_free(words);
	free(big);
	return check_failures != 0;
}
