/* schema.c - PyTorch function schemas: a tokenizer and a recursive-descent parser. */
#include "schema.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"

enum token_kind {
	TOKEN_END,
	TOKEN_IDENTIFIER,
	TOKEN_NUMBER,
	TOKEN_STRING,
	TOKEN_PUNCTUATION, /* "::", "->" or one of ( ) , = [ ] ? ! * . | */
	TOKEN_INVALID      /* a byte that starts no token, or an unterminated string */
};

struct token {
	enum token_kind kind;
	size_t start;
	size_t length;
};

struct parser {
	struct arena *arena;
	const char *text;
	size_t length;
	size_t position; /* where the next token's scan starts */
	struct token token;
	int index;
	struct diag *diag;
};

static const char supported_types[] = "Tensor, Scalar, number, int, float, long long";

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int is_identifier_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_identifier_char(char c)
{
	return is_identifier_start(c) || is_digit(c);
}

/* Scans the token at parser->position into parser->token. */
static void next_token(struct parser *parser)
{
	const char *text = parser->text;
	size_t p = parser->position, end = parser->length;
	while (p < end && is_space(text[p]))
		p++;
	struct token token = { TOKEN_END, p, 0 };
	if (p >= end) {
		parser->token = token;
		parser->position = p;
		return;
	}
	char c = text[p];
	size_t q = p + 1;
	if (is_identifier_start(c)) {
		token.kind = TOKEN_IDENTIFIER;
		while (q < end && is_identifier_char(text[q]))
			q++;
	} else if (is_digit(c) || (c == '-' && q < end && is_digit(text[q]))) {
		token.kind = TOKEN_NUMBER;
		while (q < end && (is_identifier_char(text[q]) || text[q] == '.' ||
		                   ((text[q] == '-' || text[q] == '+') &&
		                    (text[q - 1] == 'e' || text[q - 1] == 'E'))))
			q++;
	} else if (c == '\'' || c == '"') {
		token.kind = TOKEN_INVALID;
		while (q < end && text[q] != c) {
			if (text[q] == '\\' && q + 1 < end)
				q++;
			q++;
		}
		if (q < end) {
			token.kind = TOKEN_STRING;
			q++;
		}
	} else if ((c == ':' && q < end && text[q] == ':') || (c == '-' && q < end && text[q] == '>')) {
		token.kind = TOKEN_PUNCTUATION;
		q++;
	} else {
		switch (c) {
		case '(': case ')': case ',': case '=': case '[': case ']':
		case '?': case '!': case '*': case '.': case '|':
			token.kind = TOKEN_PUNCTUATION;
			break;
		default:
			token.kind = TOKEN_INVALID;
			break;
		}
	}
	token.length = q - p;
	parser->token = token;
	parser->position = q;
}

/* Returns 1 when the current token is the punctuation or keyword text of
 * length bytes; token_is takes a literal, so its length is a constant and
 * the test a few instructions (it runs several times per token). */
static inline int token_equals(const struct parser *parser, const char *text, size_t length)
{
	const struct token *token = &parser->token;
	return token->length == length && token->kind != TOKEN_END && token->kind != TOKEN_INVALID &&
	       memcmp(parser->text + token->start, text, length) == 0;
}

#define token_is(parser, literal) token_equals((parser), "" literal, sizeof(literal) - 1)

static char *token_text(const struct parser *parser)
{
	return arena_strndup(parser->arena, parser->text + parser->token.start, parser->token.length);
}

/* How a message names the current token: 'x', end of input, or a byte. */
static const char *describe_token(const struct parser *parser)
{
	const struct token *token = &parser->token;
	if (token->kind == TOKEN_END)
		return "end of input";
	unsigned char c = (unsigned char)parser->text[token->start];
	if (token->kind == TOKEN_INVALID && (c == '\'' || c == '"'))
		return "an unterminated string";
	if (token->kind == TOKEN_INVALID && (c < 0x20 || c >= 0x7f))
		return arena_printf(parser->arena, "byte 0x%02x", c);
	if (token->length > 40)
		return arena_printf(parser->arena, "'%.40s...'", parser->text + token->start);
	return arena_printf(parser->arena, "'%.*s'", (int)token->length, parser->text + token->start);
}

int schema_fail_at(struct diag *diag, const char *text, int index, size_t offset,
                   const char *format, ...)
{
	struct arena *arena = diag->arena;
	va_list args;
	va_start(args, format);
	char *message = arena_vprintf(arena, format, args);
	va_end(args);

	/* Show the line that holds offset; a multi-line schema also gets a line number. */
	size_t line_start = 0, line_number = 1;
	for (size_t i = 0; i < offset && text[i]; i++) {
		if (text[i] == '\n') {
			line_start = i + 1;
			line_number++;
		}
	}
	size_t line_end = line_start;
	while (text[line_end] && text[line_end] != '\n')
		line_end++;
	int multiline = strchr(text, '\n') != NULL;

	struct buffer out;
	buffer_init(&out, arena);
	if (multiline)
		buffer_printf(&out, "schema:%zu:%zu: error: %s\n", line_number, offset - line_start + 1, message);
	else
		buffer_printf(&out, "schema:%zu: error: %s\n", offset - line_start + 1, message);
	for (size_t i = line_start; i < line_end; i++) {
		unsigned char c = (unsigned char)text[i];
		char shown = text[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			shown = '?';
		buffer_putc(&out, shown);
	}
	buffer_putc(&out, '\n');
	/* Tabs stay tabs so the caret lines up under them. */
	for (size_t i = line_start; i < offset; i++)
		buffer_putc(&out, text[i] == '\t' ? '\t' : ' ');
	buffer_putc(&out, '^');

	diag->kind = BCO_ERROR_INPUT;
	diag->schema_index = index;
	diag->column = (int)(offset - line_start + 1);
	diag->message = out.data;
	return -1;
}

/* Fails at the current token: "expected WHAT, found TOKEN". */
static int fail_expected(struct parser *parser, const char *what)
{
	/* -1 spelled out: the static analyzer does not follow the variadic
	 * schema_fail_at, and would take a failure here for a success. */
	schema_fail_at(parser->diag, parser->text, parser->index, parser->token.start,
	               "expected %s, found %s", what, describe_token(parser));
	return -1;
}

/* Consumes the punctuation text (a literal), or fails with "expected WHAT". */
#define expect(parser, text, what) expect_punctuation((parser), "" text, sizeof(text) - 1, (what))

static int expect_punctuation(struct parser *parser, const char *text, size_t length,
                              const char *what)
{
	if (!token_equals(parser, text, length) || parser->token.kind != TOKEN_PUNCTUATION)
		return fail_expected(parser, what);
	next_token(parser);
	return 0;
}

/* Consumes an identifier into *out, or fails with "expected WHAT". */
static int expect_identifier(struct parser *parser, const char *what, char **out)
{
	if (parser->token.kind != TOKEN_IDENTIFIER)
		return fail_expected(parser, what);
	*out = token_text(parser);
	next_token(parser);
	return 0;
}

/* alias := IDENT {'|' IDENT} ['!'] ['->' (IDENT | '*')], inside the parentheses. */
static int parse_alias(struct parser *parser, struct buffer *type)
{
	char *name = NULL;
	buffer_putc(type, '(');
	for (;;) {
		if (expect_identifier(parser, "an alias name such as 'a'", &name) != 0)
			return -1;
		buffer_puts(type, name);
		if (!token_is(parser, "|"))
			break;
		next_token(parser);
		buffer_putc(type, '|');
	}
	if (token_is(parser, "!")) {
		buffer_putc(type, '!');
		next_token(parser);
	}
	if (token_is(parser, "->")) {
		next_token(parser);
		if (token_is(parser, "*")) {
			buffer_puts(type, " -> *");
			next_token(parser);
		} else {
			if (expect_identifier(parser, "an alias name or '*' after '->'", &name) != 0)
				return -1;
			buffer_printf(type, " -> %s", name);
		}
	}
	buffer_putc(type, ')');
	return expect(parser, ")", "')' to close the alias annotation");
}

/* The supported types, each with its kind. */
static const struct {
	const char *type;
	enum arg_kind kind;
} vocabulary[] = {
	{ "Tensor", ARG_TENSOR }, { "Scalar", ARG_SCALAR }, { "number", ARG_SCALAR },
	{ "int", ARG_INT },       { "float", ARG_FLOAT },   { "long long", ARG_LONG_LONG },
};

/* type := ('long' 'long' | IDENT) ['(' alias ')'] {'[' [NUMBER] ']' | '?'}
 * A type that is a word of the vocabulary alone is its vocabulary string,
 * not a copy: thousands of schemas are parsed without an allocation per
 * argument. */
static int parse_type(struct parser *parser, const char *what, const char **out)
{
	if (parser->token.kind != TOKEN_IDENTIFIER)
		return fail_expected(parser, what);
	const char *base = parser->text + parser->token.start;
	size_t base_length = parser->token.length;
	if (token_is(parser, "long")) {
		/* "long long" is one type of two words; a lone "long" is an unknown type. */
		size_t saved_position = parser->position;
		struct token saved = parser->token;
		next_token(parser);
		if (token_is(parser, "long") && parser->token.kind == TOKEN_IDENTIFIER) {
			base = "long long";
			base_length = sizeof "long long" - 1;
		} else {
			parser->token = saved;
			parser->position = saved_position;
		}
	}
	next_token(parser);
	if (!token_is(parser, "(") && !token_is(parser, "[") && !token_is(parser, "?")) {
		for (size_t i = 0; i < sizeof vocabulary / sizeof vocabulary[0]; i++)
			if (strncmp(base, vocabulary[i].type, base_length) == 0 &&
			    vocabulary[i].type[base_length] == '\0') {
				*out = vocabulary[i].type;
				return 0;
			}
		*out = arena_strndup(parser->arena, base, base_length);
		return 0;
	}
	struct buffer type;
	buffer_init(&type, parser->arena);
	buffer_append(&type, base, base_length);
	if (token_is(parser, "(")) {
		next_token(parser);
		if (parse_alias(parser, &type) != 0)
			return -1;
	}
	for (;;) {
		if (token_is(parser, "[")) {
			next_token(parser);
			buffer_putc(&type, '[');
			if (parser->token.kind == TOKEN_NUMBER) {
				buffer_append(&type, parser->text + parser->token.start, parser->token.length);
				next_token(parser);
			}
			if (expect(parser, "]", "']' to close the list type") != 0)
				return -1;
			buffer_putc(&type, ']');
		} else if (token_is(parser, "?")) {
			buffer_putc(&type, '?');
			next_token(parser);
		} else {
			break;
		}
	}
	*out = type.data;
	return 0;
}

/* default := NUMBER | STRING | IDENT | '[' [default {',' default}] ']' */
static int parse_default(struct parser *parser, int depth)
{
	if (depth > 32)
		return fail_expected(parser, "a default value nested less deeply");
	switch (parser->token.kind) {
	case TOKEN_NUMBER:
	case TOKEN_STRING:
	case TOKEN_IDENTIFIER:
		next_token(parser);
		return 0;
	default:
		break;
	}
	if (!token_is(parser, "["))
		return fail_expected(parser, "a default value (a number, a string, a name or a list)");
	next_token(parser);
	if (token_is(parser, "]")) {
		next_token(parser);
		return 0;
	}
	for (;;) {
		if (parse_default(parser, depth + 1) != 0)
			return -1;
		if (token_is(parser, "]")) {
			next_token(parser);
			return 0;
		}
		if (expect(parser, ",", "',' or ']' in the default list") != 0)
			return -1;
	}
}

/* Maps a supported type to its kind; returns -1 for any other type. */
static int kind_of_type(const char *type)
{
	for (size_t i = 0; i < sizeof vocabulary / sizeof vocabulary[0]; i++)
		if (type == vocabulary[i].type || strcmp(type, vocabulary[i].type) == 0)
			return (int)vocabulary[i].kind;
	return -1;
}

/* A growable array of arguments, in the arena. */
struct arg_list {
	struct schema_arg *items;
	size_t length;
	size_t capacity;
};

static void arg_list_push(struct arena *arena, struct arg_list *list, struct schema_arg arg)
{
	if (list->length == list->capacity) {
		size_t capacity = list->capacity ? list->capacity * 2 : 4;
		struct schema_arg *items = arena_array(arena, capacity, sizeof *items);
		if (list->length)
			memcpy(items, list->items, list->length * sizeof *items);
		list->items = items;
		list->capacity = capacity;
	}
	list->items[list->length++] = arg;
}

/* A whole decimal number (optional '-') in *value: 1; out of the long long
 * range: -1; anything else: 0. */
static int whole_number(const char *text, long long *value)
{
	const char *digits = text + (text[0] == '-');
	if (!*digits)
		return 0;
	for (const char *p = digits; *p; p++)
		if (!is_digit(*p))
			return 0;
	errno = 0;
	*value = strtoll(text, NULL, 10);
	return errno == ERANGE ? -1 : 1;
}

/* A decimal number as strtod reads it (no hex, no inf or nan) in *value:
 * 1; beyond the double range: -1; anything else: 0. */
static int real_number(const char *text, double *value)
{
	if (strpbrk(text, "xXnNiI"))
		return 0;
	char *end;
	errno = 0;
	*value = strtod(text, &end);
	if (*end || end == text)
		return 0;
	return errno == ERANGE && (*value > 1 || *value < -1) ? -1 : 1;
}

static int default_mismatch(struct parser *parser, const struct schema_arg *arg, size_t start,
                            const char *text, const char *wanted)
{
	return schema_fail_at(parser->diag, parser->text, parser->index, start,
	                      "default '%s' of argument '%s' does not match its type '%s': give %s",
	                      text, arg->name, arg->type, wanted);
}

static int default_out_of_range(struct parser *parser, const struct schema_arg *arg, size_t start,
                                const char *text, const char *range)
{
	return schema_fail_at(parser->diag, parser->text, parser->index, start,
	                      "default '%s' of argument '%s' is out of the range of its type '%s' (%s)",
	                      text, arg->name, arg->type, range);
}

/* Checks that the default at [start, end) is a value of the argument's
 * type, in its range: the rules run-custom-op --scalar applies (int: 32
 * bits; long long: 64 bits; float: a float32; Scalar: a whole number of 64
 * bits, or else a float32). */
static int check_default(struct parser *parser, const struct schema_arg *arg, size_t start,
                         size_t end)
{
	static const char whole_64[] = "a whole number of 64 bits";
	static const char float_32[] = "a float, up to about 3.4e38";
	char *text = arena_strndup(parser->arena, parser->text + start, end - start);
	long long whole = 0;
	double real = 0;
	int is_whole = whole_number(text, &whole);
	int is_real = real_number(text, &real);
	switch (arg->kind) {
	case ARG_TENSOR:
		return schema_fail_at(parser->diag, parser->text, parser->index, start,
		                      "argument '%s' of type 'Tensor' cannot have a default", arg->name);
	case ARG_INT:
	case ARG_LONG_LONG:
		if (!is_whole)
			return default_mismatch(parser, arg, start, text, "a whole number");
		if (is_whole < 0 || (arg->kind == ARG_INT && (whole < INT_MIN || whole > INT_MAX)))
			return default_out_of_range(parser, arg, start, text,
			                            arg->kind == ARG_INT ? "-2147483648 to 2147483647" : whole_64);
		return 0;
	case ARG_SCALAR:
		if (is_whole)
			return is_whole < 0 ? default_out_of_range(parser, arg, start, text, whole_64) : 0;
		break; /* any other number is a float32 */
	case ARG_FLOAT:
		break;
	}
	if (!is_real)
		return default_mismatch(parser, arg, start, text, "a number");
	if (is_real < 0 || !isfinite((float)real))
		return default_out_of_range(parser, arg, start, text, float_32);
	return 0;
}

/* Refuses a second argument of the same name. */
static int check_unique_name(struct parser *parser, const struct arg_list *args, const char *name,
                             size_t offset)
{
	for (size_t i = 0; i < args->length; i++)
		if (strcmp(args->items[i].name, name) == 0)
			return schema_fail_at(parser->diag, parser->text, parser->index, offset,
			                      "argument '%s' is declared twice; each argument needs its own "
			                      "name", name);
	return 0;
}

/* argument := type IDENT ['=' default] */
static int parse_argument(struct parser *parser, struct arg_list *args)
{
	struct schema_arg arg = { ARG_TENSOR, NULL, NULL, parser->token.start };
	if (parse_type(parser, "an argument type such as 'Tensor'", &arg.type) != 0)
		return -1;
	if (parser->token.kind != TOKEN_IDENTIFIER)
		return schema_fail_at(parser->diag, parser->text, parser->index, parser->token.start,
		                      "expected an argument name after type '%s', found %s", arg.type,
		                      describe_token(parser));
	size_t name_offset = parser->token.start;
	arg.name = token_text(parser);
	next_token(parser);
	size_t default_start = 0, default_end = 0;
	if (token_is(parser, "=")) {
		next_token(parser);
		default_start = parser->token.start;
		if (parse_default(parser, 0) != 0)
			return -1;
		default_end = parser->token.start;
		while (default_end > default_start && is_space(parser->text[default_end - 1]))
			default_end--;
	}
	int kind = kind_of_type(arg.type);
	if (kind < 0)
		return schema_fail_at(parser->diag, parser->text, parser->index, arg.offset,
		                      "argument '%s' has type '%s', which is not supported; "
		                      "the supported types are %s",
		                      arg.name, arg.type, supported_types);
	arg.kind = (enum arg_kind)kind;
	if (check_unique_name(parser, args, arg.name, name_offset) != 0 ||
	    (default_end > default_start && check_default(parser, &arg, default_start, default_end) != 0))
		return -1;
	arg_list_push(parser->arena, args, arg);
	return 0;
}

/* arguments := [item {',' item}] ')', item := '*' | argument: a '*' marks
 * the keyword-only arguments after it, so it comes once, and before one. */
static int parse_arguments(struct parser *parser, struct arg_list *args)
{
	size_t star = 0, args_before_star = 0;
	int starred = 0;
	if (!token_is(parser, ")")) {
		for (;;) {
			if (token_is(parser, "*")) {
				if (starred)
					return schema_fail_at(parser->diag, parser->text, parser->index,
					                      parser->token.start,
					                      "a second '*': the keyword-only arguments are marked once");
				starred = 1;
				star = parser->token.start;
				args_before_star = args->length;
				next_token(parser);
			} else if (parse_argument(parser, args) != 0) {
				return -1;
			}
			if (token_is(parser, ")"))
				break;
			if (expect(parser, ",", "',' or ')' after an argument") != 0)
				return -1;
		}
	}
	if (starred && args->length == args_before_star)
		return schema_fail_at(parser->diag, parser->text, parser->index, star,
		                      "'*' marks the keyword-only arguments after it, but none follows");
	next_token(parser);
	return 0;
}

/* One return: type [IDENT].  Records the first one in schema. */
static int parse_return(struct parser *parser, struct schema *schema, size_t *count,
                        size_t *first_offset)
{
	const char *type;
	char *name = NULL;
	size_t offset = parser->token.start;
	if (parse_type(parser, "a return type such as 'Tensor'", &type) != 0)
		return -1;
	if (parser->token.kind == TOKEN_IDENTIFIER) {
		name = token_text(parser);
		next_token(parser);
	}
	if ((*count)++ == 0) {
		schema->return_type = type;
		schema->return_name = name;
		*first_offset = offset;
	}
	return 0;
}

/* returns := return | '(' [return {',' return}] ')', then the end of input. */
static int parse_returns(struct parser *parser, struct schema *schema)
{
	size_t count = 0, start = parser->token.start;
	size_t first_offset = start;
	if (token_is(parser, "(")) {
		next_token(parser);
		if (!token_is(parser, ")")) {
			for (;;) {
				if (parse_return(parser, schema, &count, &first_offset) != 0)
					return -1;
				if (token_is(parser, ")"))
					break;
				if (expect(parser, ",", "',' or ')' after the return type") != 0)
					return -1;
			}
		}
		next_token(parser);
	} else if (parse_return(parser, schema, &count, &first_offset) != 0) {
		return -1;
	}
	if (parser->token.kind != TOKEN_END)
		return fail_expected(parser, "the end of the schema after the return type");
	if (count != 1)
		return schema_fail_at(parser->diag, parser->text, parser->index, start,
		                      "only a single return value is supported, found %zu", count);
	if (strcmp(schema->return_type, "Tensor") != 0)
		return schema_fail_at(parser->diag, parser->text, parser->index, first_offset,
		                      "only Tensor return types are supported, found '%s'",
		                      schema->return_type);
	return 0;
}

int schema_parse(struct arena *arena, const char *text, int index, struct schema *schema,
                 struct diag *diag)
{
	struct parser parser = { arena, text, strlen(text), 0, { TOKEN_END, 0, 0 }, index, diag };
	memset(schema, 0, sizeof *schema);
	schema->text = text;
	next_token(&parser);

	if (expect_identifier(&parser, "a namespace such as 'my_ops' to begin the schema "
	                               "'my_ops::name(...) -> Tensor'", &schema->namespace_name) != 0 ||
	    expect(&parser, "::", "'::' after the namespace (a schema begins 'namespace::name(')") != 0)
		return -1;
	schema->name_offset = parser.token.start;
	if (expect_identifier(&parser, "the op name after '::'", &schema->name) != 0)
		return -1;
	if (token_is(&parser, ".")) {
		next_token(&parser);
		if (expect_identifier(&parser, "an overload name after '.'", &schema->overload) != 0)
			return -1;
	}
	if (expect(&parser, "(", "'(' to start the argument list") != 0)
		return -1;

	struct arg_list args = { NULL, 0, 0 };
	if (parse_arguments(&parser, &args) != 0)
		return -1;
	schema->args = args.items;
	schema->arg_count = args.length;

	if (expect(&parser, "->", "'->' and the return type after the argument list") != 0)
		return -1;
	return parse_returns(&parser, schema);
}

char *schema_signature(struct arena *arena, const struct schema *schema)
{
	struct buffer out;
	buffer_init(&out, arena);
	buffer_putc(&out, '(');
	for (size_t i = 0; i < schema->arg_count; i++)
		buffer_printf(&out, "%s%s %s", i ? ", " : "", schema->args[i].type, schema->args[i].name);
	buffer_putc(&out, ')');
	return out.data;
}
