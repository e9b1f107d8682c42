/* test_codegen.c - wrapper.cpp text against golden files, through the public API. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buildcustomop.h"
#include "codegen.h"
#include "diag.h"
#include "fsutil.h"
#include "validate.h"
#include "check.h"

static jmp_buf out_of_memory;
static struct arena arena;

static const char *golden(const char *name)
{
	char *text;
	size_t length;
	const char *path = arena_printf(&arena, "tests/golden/%s", name);
	if (fs_read_file(&arena, path, &text, &length) != 0)
		return arena_printf(&arena, "cannot read %s", path);
	return text;
}

/* The wrapper for ops given as NULL-terminated "FN=SCHEMA" or "SCHEMA" strings. */
static const char *wrapper(enum bco_target target, const char *const *ops)
{
	const char *functions[8] = { 0 }, *schemas[8];
	size_t count = 0;
	for (; ops[count]; count++) {
		const char *equals = strchr(ops[count], '=');
		const char *colons = strstr(ops[count], "::");
		if (equals && equals < colons) {
			functions[count] = arena_strndup(&arena, ops[count], (size_t)(equals - ops[count]));
			schemas[count] = equals + 1;
		} else {
			schemas[count] = ops[count];
		}
	}
	struct bco_request request = { 0 };
	request.functions = functions;
	request.function_count = count;
	request.schemas = schemas;
	request.schema_count = count;
	request.target = target;
	char *text = NULL;
	bco_error *error = NULL;
	if (bco_generate_wrapper(&request, &text, &error) != BCO_OK) {
		const char *message = arena_strdup(&arena, bco_error_message(error));
		bco_error_free(error);
		return message;
	}
	const char *copy = arena_strdup(&arena, text);
	bco_free(text);
	return copy;
}

int main(void)
{
	if (setjmp(out_of_memory)) {
		puts("not ok - out of memory");
		return 1;
	}
	arena_init(&arena, &out_of_memory);

	const char *relu[] = { "relu=my_ops::relu(Tensor x) -> Tensor", NULL };
	const char *relu_axpy[] = { "relu=my_ops::relu(Tensor x) -> Tensor",
	                            "axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor", NULL };
	const char *every[] = { "my_ops::every(Tensor t, Scalar s, number n, int i, float f, long long l) -> Tensor",
	                        "nothing=my_ops::zero() -> Tensor", NULL };
	CHECK_STR(wrapper(BCO_TARGET_XTENSA, relu), golden("relu.xtensa.cpp"), "one op");
	CHECK_STR(wrapper(BCO_TARGET_XTENSA, relu_axpy), golden("relu_axpy.xtensa.cpp"),
	          "two ops, byte for byte as the reference text");
	CHECK_STR(wrapper(BCO_TARGET_XTENSA, every), golden("every_type.xtensa.cpp"),
	          "every argument type, and zero arguments");
	CHECK_STR(wrapper(BCO_TARGET_HOST, relu), golden("relu.host.cpp"),
	          "the host wrapper differs only in the stack-switch tail");
	const char *bad[] = { "relu=my_ops::relu(Tensor[] x) -> Tensor", NULL };
	CHECK_STR(wrapper(BCO_TARGET_XTENSA, bad),
	          "schema:14: error: argument 'x' has type 'Tensor[]', which is not supported; the supported "
	          "types are Tensor, Scalar, number, int, float, long long\n"
	          "my_ops::relu(Tensor[] x) -> Tensor\n             ^",
	          "an invalid op gives the parser's message through the API");

	/* The ops record of host builds. */
	struct diag diag;
	diag_init(&diag, &arena);
	const char *schemas[] = { "my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor",
	                          "my_ops::count(long long  n,number\tz) -> Tensor", "my_ops::none() -> Tensor" };
	struct op *ops;
	size_t count;
	CHECK_INT(validate_ops(&arena, BCO_TARGET_XTENSA, NULL, 0, schemas, 3, NULL, NULL, &ops, &count, &diag), 0, "record ops validate");
	char *libraries[] = { "ops.so" }, *ids[] = { "0123456789abcdef" };
	CHECK_STR(codegen_ops_record(&arena, ops, count, libraries, ids, 1),
	          "# build-custom-op ops 2\n"
	          "cores 1\n"
	          "library ops.so 0123456789abcdef\n"
	          "axpby\tTTSfi\t(Tensor x, Tensor y, Scalar a, float b, int n)\n"
	          "count\tlS\t(long long n, number z)\n"
	          "none\t\t()\n", "the ops record names the layout, each library with its id, and each op's kinds and signature");
	CHECK_STR(codegen_declaration(&arena, &ops[0]),
	          "at::Tensor axpby(const at::Tensor&, const at::Tensor&, const at::Scalar&, float, int)",
	          "the declaration a kernel must match");

	/* Many ops: every name appears in the table, in order. */
	enum { MANY = 10000 };
	const char **many_functions = arena_array(&arena, MANY, sizeof(char *));
	const char **many_schemas = arena_array(&arena, MANY, sizeof(char *));
	for (size_t i = 0; i < MANY; i++) {
		many_functions[i] = arena_printf(&arena, "op%zu", i);
		many_schemas[i] = "a::b(Tensor x) -> Tensor";
	}
	CHECK_INT(validate_ops(&arena, BCO_TARGET_XTENSA, many_functions, MANY, many_schemas, MANY, NULL, NULL, &ops, &count, &diag),
	          0, "10000 ops validate");
	const char *text = codegen_wrapper(&arena, ops, count, "");
	CHECK(strstr(text, "int get_func_cnt() { return 10000; }\n") != NULL, "10000 ops are counted");
	CHECK(strstr(text, "        case 9999: return op9999_stack_switch;\n        default: return 0;") != NULL,
	      "the last op closes the table");
	arena_release(&arena);
	return check_failures != 0;
}
