/* test_opsfile.c - the schema record reader (run/opsfile.c), and the
 * error it fills (run/errors.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../run/errors.h"
#include "../../run/opsfile.h"
#include "../unit/check.h"

/* Parses text; returns the error ("" on success) and leaves ops filled. */
static const char *parse(const char *text, struct ops_file *ops)
{
	static struct rco_error error;
	if (ops_parse(text, strlen(text), ops, &error) == 0)
		return "";
	return error.message;
}

static void test_valid_record(void)
{
	struct ops_file ops;
	CHECK_STR(parse("# build-custom-op ops 2\n"
	                "cores 1\n"
	                "library ops.so 0123456789abcdef\n"
	                "axpby\tTTSfi\t(Tensor x, Tensor y, Scalar a, float b, int n)\n"
	                "noargs\t\t()\n"
	                "big\tTl\t(Tensor(a) x, long long count)\n",
	                &ops),
	          "", "a record of three ops parses");
	CHECK_INT(ops.count, 3, "three ops");
	if (ops.count != 3)
		return;
	CHECK(ops.version == 2 && ops.cores == 1 && ops.library_count == 1, "version 2, one core");
	CHECK_STR(ops.libraries[0].name, "ops.so", "the library's file name");
	CHECK_STR(ops.libraries[0].id, "0123456789abcdef", "and its id");
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

	CHECK_STR(parse("# build-custom-op ops 2\ncores 1\nlibrary x.so 0123456789abcdef\nodd\tTT\t(Tensor x)", &ops), "",
	          "a record without a final newline parses");
	op_argument_text(&ops.ops[0], 1, text, sizeof text);
	CHECK_STR(text, "argument 2", "a signature that does not match the kinds falls back");
	ops_free(&ops);

	char eight[1024];
	size_t used = (size_t)snprintf(eight, sizeof eight, "# build-custom-op ops 2\ncores 8\n");
	for (int core = 0; core < 8; core++)
		used += (size_t)snprintf(eight + used, sizeof eight - used,
		                         "library relu_cpu%d.so %016x\n", core, core + 1);
	snprintf(eight + used, sizeof eight - used, "relu\tT\t(Tensor x)\n");
	CHECK_STR(parse(eight, &ops), "", "a multicore record parses");
	CHECK(ops.cores == 8 && ops.library_count == 8 && ops.count == 1 &&
	      strcmp(ops.libraries[7].name, "relu_cpu7.so") == 0 &&
	      strcmp(ops.libraries[7].id, "0000000000000008") == 0, "with its eight libraries");
	ops_free(&ops);
	CHECK_STR(parse("# build-custom-op ops 1\nrelu\tT\t(Tensor x)\n", &ops), "",
	          "a version 1 record is recognised");
	CHECK(ops.version == 1 && ops.cores == 0 && ops.count == 1, "as version 1, without a layout");
	ops_free(&ops);
}

static void test_invalid_records(void)
{
	struct ops_file ops;
	CHECK_STR(parse("", &ops), "1: the file is empty (the first line must be \"# build-custom-op "
	                           "ops 2\")", "empty file");
	CHECK_STR(parse("# build-custom-op ops 3\n", &ops),
	          "1: not a build-custom-op ops record (the first line must be \"# build-custom-op "
	          "ops 2\")", "another version");
	CHECK_STR(parse("# build-custom-op ops 2\ncores 2\n", &ops),
	          "2: expected \"cores 1\" or \"cores 8\"", "a layout of 2 cores");
	CHECK_STR(parse("# build-custom-op ops 2\ncores 8\nlibrary a.so 0123456789abcdef\nrelu\tT\t(Tensor x)\n",
	                &ops),
	          "4: expected \"library FILE ID\" (the ID 16 hex digits) for core library 2 of 8",
	          "an op where a library line belongs");
	CHECK_STR(parse("# build-custom-op ops 2\ncores 1\nlibrary a.so 0123456789ABCDEF\n", &ops),
	          "3: expected \"library FILE ID\" (the ID 16 hex digits) for core library 1 of 1",
	          "an id in capitals");
	CHECK_STR(parse("# build-custom-op ops 2\ncores 1\nlibrary a.so 0123\n", &ops),
	          "3: expected \"library FILE ID\" (the ID 16 hex digits) for core library 1 of 1",
	          "a short id");
	CHECK_STR(parse("# build-custom-op ops 2\ncores 8\nlibrary a.so 0123456789abcdef\n", &ops),
	          "3: the record ends before its 8 \"library\" lines", "a record cut short");
	CHECK_STR(parse("# build-custom-op ops 2\n", &ops),
	          "1: the record ends before its \"cores\" line", "a record without a layout");
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

/* A file's errors name it before the line: "PATH:LINE: problem". */
static void test_read_file(void)
{
	char path[] = "/tmp/test_opsfile.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "# not a record\n", 15) != 15)
		printf("# cannot write %s\n", path);
	if (fd >= 0)
		close(fd);
	struct ops_file ops;
	static struct rco_error error;
	CHECK_INT(ops_read_file(path, &ops, &error), -1, "a file that is no record is refused");
	char expected[256];
	snprintf(expected, sizeof expected, "%s:1: not a build-custom-op ops record (the first line "
	         "must be \"%s\")", path, OPSFILE_HEADER);
	CHECK_STR(error.message, expected, "its path before the line and the problem");
	CHECK_INT(error.status, RCO_ERROR_BUILD, "a build that cannot be used");
	unlink(path);
	CHECK_INT(ops_read_file(path, &ops, &error), 1, "a missing file is told apart");
}

/* A prefix never overflows the message: what does not fit is cut from
 * the end, and the message stays terminated. */
static void test_error_prefix(void)
{
	static struct rco_error error;
	error_fail(&error, RCO_ERROR_BUILD, "%s", "problem");
	error_prefix(&error, "%s:%d: ", "path", 3);
	CHECK_STR(error.message, "path:3: problem", "the prefix comes first");
	CHECK_INT(error.status, RCO_ERROR_BUILD, "the status stays");
	memset(error.message, 'm', sizeof error.message - 1);
	error.message[sizeof error.message - 1] = '\0';
	error_prefix(&error, "%s", "prefix: ");
	CHECK(strncmp(error.message, "prefix: mmm", 11) == 0 &&
	              strlen(error.message) == sizeof error.message - 1,
	      "a full message keeps the prefix and loses its end");
	char *long_prefix = malloc(sizeof error.message + 10);
	if (!long_prefix)
		return;
	memset(long_prefix, 'p', sizeof error.message + 9);
	long_prefix[sizeof error.message + 9] = '\0';
	error_fail(&error, RCO_ERROR_BUILD, "%s", "problem");
	error_prefix(&error, "%s", long_prefix);
	CHECK(strlen(error.message) == sizeof error.message - 1 && error.message[0] == 'p' &&
	              error.message[sizeof error.message - 2] == 'p',
	      "a prefix longer than the message fills it");
	free(long_prefix);
}

int main(void)
{
	test_valid_record();
	test_invalid_records();
	test_read_file();
	test_error_prefix();
	return check_failures != 0;
}
