/* test_opsfile.c - the schema record reader (run/opsfile.c). */
#include <stdio.h>
#include <string.h>

#include "../../run/opsfile.h"
#include "../unit/check.h"

/* Parses text; returns the error ("" on success) and leaves ops filled. */
static const char *parse(const char *text, struct ops_file *ops)
{
	static char error[OPSFILE_ERROR_SIZE];
	if (ops_parse(text, strlen(text), ops, error) == 0)
		return "";
	return error;
}

static void test_valid_record(void)
{
	struct ops_file ops;
	CHECK_STR(parse("# build-custom-op ops 1\n"
	                "axpby\tTTSfi\t(Tensor x, Tensor y, Scalar a, float b, int n)\n"
	                "noargs\t\t()\n"
	                "big\tTl\t(Tensor(a) x, long long count)\n",
	                &ops),
	          "", "a record of three ops parses");
	CHECK_INT(ops.count, 3, "three ops");
	if (ops.count != 3)
		return;
	CHECK_STR(ops.ops[0].kinds, "TTSfi", "kinds of axpby");
	CHECK_STR(ops.ops[1].kinds, "", "an op without arguments has empty kinds");
	CHECK_STR(ops.ops[2].signature, "(Tensor(a) x, long long count)", "signature kept as written");
	char text[64];
	op_argument_text(&ops.ops[0], 2, text, sizeof text);
	CHECK_STR(text, "Scalar a", "third argument of axpby");
	op_argument_text(&ops.ops[0], 4, text, sizeof text);
	CHECK_STR(text, "int n", "last argument of axpby");
	op_argument_text(&ops.ops[2], 0, text, sizeof text);
	CHECK_STR(text, "Tensor(a) x", "an alias annotation does not split the argument");
	ops_list_names(&ops, text, sizeof text);
	CHECK_STR(text, "axpby, noargs, big", "names listed in order");
	CHECK(ops_find(&ops, "big") == &ops.ops[2] && ops_find(&ops, "small") == NULL,
	      "find by name");
	ops_free(&ops);

	CHECK_STR(parse("# build-custom-op ops 1\nodd\tTT\t(Tensor x)", &ops), "",
	          "a record without a final newline parses");
	op_argument_text(&ops.ops[0], 1, text, sizeof text);
	CHECK_STR(text, "argument 2", "a signature that does not match the kinds falls back");
	ops_free(&ops);
}

static void test_invalid_records(void)
{
	struct ops_file ops;
	CHECK_STR(parse("", &ops), "1: the file is empty (the first line must be \"# build-custom-op "
	                           "ops 1\")", "empty file");
	CHECK_STR(parse("# build-custom-op ops 2\n", &ops),
	          "1: not a build-custom-op ops record (the first line must be \"# build-custom-op "
	          "ops 1\")", "another version");
	CHECK_STR(parse("# build-custom-op ops 1\nrelu (Tensor x)\n", &ops),
	          "2: expected NAME<TAB>KINDS<TAB>(SIGNATURE)", "fields not separated by tabs");
	CHECK_STR(parse("# build-custom-op ops 1\nrelu\tTd\t(Tensor x, double y)\n", &ops),
	          "2: unknown argument kind 'd' (the kinds are T, S, i, f and l)", "unknown kind");
	CHECK_STR(parse("# build-custom-op ops 1\nrelu\tT\tTensor x\n", &ops),
	          "2: the signature must be the argument list in parentheses", "no parentheses");
	CHECK_STR(parse("# build-custom-op ops 1\nrelu\tT\t(Tensor x)\nrelu\tT\t(Tensor x)\n", &ops),
	          "3: op relu is listed twice", "duplicate op");
	CHECK_STR(parse("# build-custom-op ops 1\n\tT\t(Tensor x)\n", &ops), "2: the op name is empty",
	          "empty name");
	CHECK_INT(ops.count, 0, "a failed parse leaves no ops");
}

int main(void)
{
	test_valid_record();
	test_invalid_records();
	return check_failures != 0;
}
