/* test_schema.c - the schema parser: accepted forms and exact errors. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "schema.h"
#include "check.h"

static jmp_buf out_of_memory;
static struct arena arena;

/* Parses text and returns "ns::name[.overload] kinds(name:type,...) -> ret[ name]"
 * or "error COLUMN: message" so one string says everything. */
static const char *parse(const char *text)
{
	struct diag diag;
	struct schema schema;
	diag_init(&diag, &arena);
	if (schema_parse(&arena, text, 0, &schema, &diag) != 0)
		return arena_printf(&arena, "error %d: %s", diag.column, diag.message);
	struct buffer out;
	buffer_init(&out, &arena);
	buffer_printf(&out, "%s::%s", schema.namespace_name, schema.name);
	if (schema.overload)
		buffer_printf(&out, ".%s", schema.overload);
	buffer_putc(&out, '(');
	static const char letters[] = "TSifl";
	for (size_t i = 0; i < schema.arg_count; i++)
		buffer_printf(&out, "%s%c:%s:%s", i ? "," : "", letters[schema.args[i].kind],
		              schema.args[i].type, schema.args[i].name);
	buffer_printf(&out, ") -> %s", schema.return_type);
	if (schema.return_name)
		buffer_printf(&out, " %s", schema.return_name);
	return out.data;
}

static void accepted_forms(void)
{
	CHECK_STR(parse("my_ops::relu(Tensor x) -> Tensor"), "my_ops::relu(T:Tensor:x) -> Tensor",
	          "the plain form");
	CHECK_STR(parse("my_ops::relu(Tensor x)->Tensor"), "my_ops::relu(T:Tensor:x) -> Tensor",
	          "no space around the arrow");
	CHECK_STR(parse("  my_ops :: relu ( Tensor   x ) ->  Tensor  "),
	          "my_ops::relu(T:Tensor:x) -> Tensor", "spaces between every token");
	CHECK_STR(parse("my_ops::axpy(Tensor x,Scalar a,float b,int c)->Tensor"),
	          "my_ops::axpy(T:Tensor:x,S:Scalar:a,f:float:b,i:int:c) -> Tensor",
	          "no space after commas (the original mis-split this)");
	CHECK_STR(parse("my_ops::f(\n\tTensor x,\n\tnumber y\n) ->\n(Tensor)"),
	          "my_ops::f(T:Tensor:x,S:number:y) -> Tensor", "tabs and newlines; number is a Scalar");
	CHECK_STR(parse("my_ops::f(Tensor x) -> (Tensor out)"), "my_ops::f(T:Tensor:x) -> Tensor out",
	          "a named return in parentheses");
	CHECK_STR(parse("my_ops::f(Tensor x) -> Tensor out"), "my_ops::f(T:Tensor:x) -> Tensor out",
	          "a named return without parentheses");
	CHECK_STR(parse("my_ops::f() -> Tensor"), "my_ops::f() -> Tensor", "zero arguments");
	CHECK_STR(parse("my_ops::f( ) -> Tensor"), "my_ops::f() -> Tensor", "zero arguments with a space");
	CHECK_STR(parse("my_ops::f(long long n) -> Tensor"), "my_ops::f(l:long long:n) -> Tensor",
	          "long long is one type of two words");
	CHECK_STR(parse("my_ops::f(long   long\tn) -> Tensor"), "my_ops::f(l:long long:n) -> Tensor",
	          "long long with any whitespace between the words");
	CHECK_STR(parse("my_ops::f.out(Tensor x) -> Tensor"), "my_ops::f.out(T:Tensor:x) -> Tensor",
	          "an overload name");
	CHECK_STR(parse("my_ops::f(Tensor x, *, int n=3, float a = -1.5e-3, Scalar s=2, Scalar t=0.5, "
	                "long long l=-9223372036854775808) -> Tensor"),
	          "my_ops::f(T:Tensor:x,i:int:n,f:float:a,S:Scalar:s,S:Scalar:t,l:long long:l) -> Tensor",
	          "keyword-only marker and defaults of the right type are accepted and dropped");
	CHECK_STR(parse("my_ops::f(*, Tensor x) -> Tensor"), "my_ops::f(T:Tensor:x) -> Tensor",
	          "every argument keyword-only");
	CHECK_STR(parse("my_ops::f(int n=-2147483648, int m=2147483647, float x=1e-400, "
	                "float y=100000000000000000000000) -> Tensor"),
	          "my_ops::f(i:int:n,i:int:m,f:float:x,f:float:y) -> Tensor",
	          "defaults at the ends of their ranges");
}

/* The error line of a parse (without the schema and the caret). */
static const char *error_of(const char *text)
{
	const char *result = parse(text);
	const char *newline = strchr(result, '\n');
	return newline ? arena_strndup(&arena, result, (size_t)(newline - result)) : result;
}

static void argument_rules(void)
{
	CHECK_STR(error_of("my_ops::f(Tensor x, int x) -> Tensor"),
	          "error 25: schema:25: error: argument 'x' is declared twice; each argument needs its "
	          "own name", "a duplicate argument name");
	CHECK_STR(error_of("my_ops::f(*) -> Tensor"),
	          "error 11: schema:11: error: '*' marks the keyword-only arguments after it, but none "
	          "follows", "a '*' with nothing after it");
	CHECK_STR(error_of("my_ops::f(Tensor x, *) -> Tensor"),
	          "error 21: schema:21: error: '*' marks the keyword-only arguments after it, but none "
	          "follows", "a '*' at the end");
	CHECK_STR(error_of("my_ops::f(Tensor x, *, int n, *, int m) -> Tensor"),
	          "error 31: schema:31: error: a second '*': the keyword-only arguments are marked once",
	          "a second '*'");
	CHECK_STR(error_of("my_ops::f(Tensor x=1) -> Tensor"),
	          "error 20: schema:20: error: argument 'x' of type 'Tensor' cannot have a default",
	          "a Tensor with a default (the original took 'x=1' for the name)");
	const struct {
		const char *text;
		const char *error;
	} defaults[] = {
		{ "int x=1.5", "default '1.5' of argument 'x' does not match its type 'int': give a whole number" },
		{ "int x=[1, [2, 3]]", "default '[1, [2, 3]]' of argument 'x' does not match its type 'int': give a whole number" },
		{ "int x='a\\'b'", "default ''a\\'b'' of argument 'x' does not match its type 'int': give a whole number" },
		{ "long long x=\"q\"", "default '\"q\"' of argument 'x' does not match its type 'long long': give a whole number" },
		{ "float x=None", "default 'None' of argument 'x' does not match its type 'float': give a number" },
		{ "float x=0x10", "default '0x10' of argument 'x' does not match its type 'float': give a number" },
		{ "Scalar x=True", "default 'True' of argument 'x' does not match its type 'Scalar': give a number" },
		{ "int x=2147483648", "default '2147483648' of argument 'x' is out of the range of its type 'int' (-2147483648 to 2147483647)" },
		{ "long long x=9223372036854775808", "default '9223372036854775808' of argument 'x' is out of the range of its type 'long long' (a whole number of 64 bits)" },
		{ "float x=1e39", "default '1e39' of argument 'x' is out of the range of its type 'float' (a float, up to about 3.4e38)" },
		{ "Scalar x=9223372036854775808", "default '9223372036854775808' of argument 'x' is out of the range of its type 'Scalar' (a whole number of 64 bits)" },
		{ "Scalar x=1e400", "default '1e400' of argument 'x' is out of the range of its type 'Scalar' (a float, up to about 3.4e38)" },
	};
	for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
		const char *text = arena_printf(&arena, "my_ops::f(%s) -> Tensor", defaults[i].text);
		/* The caret is at the default, after "my_ops::f(TYPE NAME=". */
		int column = (int)(strchr(text, '=') - text) + 2;
		CHECK_STR(error_of(text),
		          arena_printf(&arena, "error %d: schema:%d: error: %s", column, column, defaults[i].error),
		          arena_printf(&arena, "the default of %s is refused", defaults[i].text));
	}
}

static void errors(void)
{
	CHECK_STR(parse(""),
	          "error 1: schema:1: error: expected a namespace such as 'my_ops' to begin the schema "
	          "'my_ops::name(...) -> Tensor', found end of input\n\n^",
	          "empty schema");
	CHECK_STR(parse("relu(Tensor x) -> Tensor"),
	          "error 5: schema:5: error: expected '::' after the namespace (a schema begins "
	          "'namespace::name('), found '('\nrelu(Tensor x) -> Tensor\n    ^",
	          "missing namespace");
	CHECK_STR(parse("my_ops::(Tensor x) -> Tensor"),
	          "error 9: schema:9: error: expected the op name after '::', found '('\n"
	          "my_ops::(Tensor x) -> Tensor\n        ^", "missing op name");
	CHECK_STR(parse("my_ops::relu Tensor x) -> Tensor"),
	          "error 14: schema:14: error: expected '(' to start the argument list, found 'Tensor'\n"
	          "my_ops::relu Tensor x) -> Tensor\n             ^", "missing '('");
	CHECK_STR(parse("my_ops::relu(Tensor x"),
	          "error 22: schema:22: error: expected ',' or ')' after an argument, found end of input\n"
	          "my_ops::relu(Tensor x\n                     ^", "unterminated argument list");
	CHECK_STR(parse("my_ops::relu(Tensor) -> Tensor"),
	          "error 20: schema:20: error: expected an argument name after type 'Tensor', found ')'\n"
	          "my_ops::relu(Tensor) -> Tensor\n                   ^", "argument without a name");
	CHECK_STR(parse("my_ops::relu(Tensor x)"),
	          "error 23: schema:23: error: expected '->' and the return type after the argument list, "
	          "found end of input\nmy_ops::relu(Tensor x)\n                      ^", "missing return");
	CHECK_STR(parse("my_ops::relu(Tensor x) -> Tensor junk more"),
	          "error 39: schema:39: error: expected the end of the schema after the return type, "
	          "found 'more'\nmy_ops::relu(Tensor x) -> Tensor junk more\n                                      ^",
	          "trailing tokens");
	CHECK_STR(parse("my_ops::relu(Tensor x, Tensor[] y) -> Tensor"),
	          "error 24: schema:24: error: argument 'y' has type 'Tensor[]', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::relu(Tensor x, Tensor[] y) -> Tensor\n                       ^",
	          "a list type is rejected with the argument's name");
	CHECK_STR(parse("my_ops::f(Tensor? x) -> Tensor"),
	          "error 11: schema:11: error: argument 'x' has type 'Tensor?', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::f(Tensor? x) -> Tensor\n          ^", "an optional type is rejected");
	CHECK_STR(parse("my_ops::f(Tensor(a!) x) -> Tensor"),
	          "error 11: schema:11: error: argument 'x' has type 'Tensor(a!)', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::f(Tensor(a!) x) -> Tensor\n          ^", "an alias annotation is rejected");
	CHECK_STR(parse("my_ops::f(int[2] x) -> Tensor"),
	          "error 11: schema:11: error: argument 'x' has type 'int[2]', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::f(int[2] x) -> Tensor\n          ^", "a fixed-size list is rejected");
	const char *unsupported[] = { "str", "bool", "double", "long", "Tensor(a)" };
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
		const char *text = arena_printf(&arena, "my_ops::f(%s x) -> Tensor", unsupported[i]);
		CHECK_STR(parse(text),
		          arena_printf(&arena, "error 11: schema:11: error: argument 'x' has type '%s', which "
		                       "is not supported; the supported types are Tensor, Scalar, number, "
		                       "int, float, long long\n%s\n          ^", unsupported[i], text),
		          arena_printf(&arena, "type %s is rejected", unsupported[i]));
	}
	CHECK_STR(parse("my_ops::f(Tensor x) -> int"),
	          "error 24: schema:24: error: only Tensor return types are supported, found 'int'\n"
	          "my_ops::f(Tensor x) -> int\n                       ^", "a non-Tensor return");
	CHECK_STR(parse("my_ops::f(Tensor x) -> (Tensor a, Tensor b)"),
	          "error 24: schema:24: error: only a single return value is supported, found 2\n"
	          "my_ops::f(Tensor x) -> (Tensor a, Tensor b)\n                       ^", "two returns");
	CHECK_STR(parse("my_ops::f(Tensor x) -> ()"),
	          "error 24: schema:24: error: only a single return value is supported, found 0\n"
	          "my_ops::f(Tensor x) -> ()\n                       ^", "no return");
	CHECK_STR(parse("my_ops::f(Tensor x) -> Tensor[]"),
	          "error 24: schema:24: error: only Tensor return types are supported, found 'Tensor[]'\n"
	          "my_ops::f(Tensor x) -> Tensor[]\n                       ^", "a list return");
	CHECK_STR(parse("my_ops::f(str s='abc) -> Tensor"),
	          "error 17: schema:17: error: expected a default value (a number, a string, a name or a "
	          "list), found an unterminated string\nmy_ops::f(str s='abc) -> Tensor\n                ^",
	          "an unterminated string default");
	CHECK_STR(parse("my_ops::f(int x=) -> Tensor"),
	          "error 17: schema:17: error: expected a default value (a number, a string, a name or a "
	          "list), found ')'\nmy_ops::f(int x=) -> Tensor\n                ^", "an empty default");
	CHECK_STR(parse("my_ops::f(Tensor x) -> Tensor\x01"),
	          "error 30: schema:30: error: expected the end of the schema after the return type, "
	          "found byte 0x01\nmy_ops::f(Tensor x) -> Tensor?\n                             ^",
	          "a control byte is named and not echoed");
	CHECK_STR(parse("my_ops::f(\n  Tensor[] x) -> Tensor"),
	          "error 3: schema:2:3: error: argument 'x' has type 'Tensor[]', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "  Tensor[] x) -> Tensor\n  ^", "a multi-line schema shows the line and its number");
	CHECK_STR(parse("my_ops::f(\tTensor[] x) -> Tensor"),
	          "error 12: schema:12: error: argument 'x' has type 'Tensor[]', which is not supported; "
	          "the supported types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::f(\tTensor[] x) -> Tensor\n          \t^", "the caret keeps tabs to line up");
}

static void hostile_input(void)
{
	/* Every prefix of a long valid schema must fail cleanly or parse. */
	const char *text = "my_ops::f.o(Tensor(a|b! -> *)[3]? x = [1, 'a', \"b\", -2.5e+3], *, long long n) -> (Tensor y)";
	size_t length = strlen(text);
	int crashed = 0;
	for (size_t i = 0; i <= length; i++) {
		char *prefix = arena_strndup(&arena, text, i);
		const char *result = parse(prefix);
		if (!result)
			crashed = 1;
	}
	CHECK(!crashed, "every prefix of a complex schema gets an answer");
	char deep[300];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = '\0';
	const char *nested = arena_printf(&arena, "a::b(int x=%s) -> Tensor", deep);
	CHECK(strncmp(parse(nested), "error", 5) == 0, "deeply nested defaults are refused, not recursed");
}

int main(void)
{
	if (setjmp(out_of_memory)) {
		puts("not ok - out of memory");
		return 1;
	}
	arena_init(&arena, &out_of_memory);
	accepted_forms();
	argument_rules();
	errors();
	hostile_input();
	arena_release(&arena);
	return check_failures != 0;
}
