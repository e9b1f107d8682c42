/* test_validate.c - op validation: every rule, with its exact message. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "validate.h"
#include "check.h"

static jmp_buf out_of_memory;
static struct arena arena;
static char warnings[4096];

static void collect_warning(void *context, enum bco_message_kind kind, const char *text)
{
	(void)context;
	if (kind == BCO_MESSAGE_WARNING) {
		strncat(warnings, text, sizeof warnings - strlen(warnings) - 2);
		strcat(warnings, "\n");
	}
}

/* Validates count ops (functions may be NULL); returns "ok N" or "error K: message". */
static enum bco_target target = BCO_TARGET_XTENSA;

static const char *validate(const char *const *functions, size_t function_count,
                            const char *const *schemas, size_t schema_count)
{
	struct diag diag;
	struct op *ops;
	size_t count;
	diag_init(&diag, &arena);
	warnings[0] = '\0';
	if (validate_ops(&arena, target, functions, function_count, schemas, schema_count,
	                 collect_warning, NULL, &ops, &count, &diag) != 0)
		return arena_printf(&arena, "error %d: %s", diag.schema_index, diag.message);
	return arena_printf(&arena, "ok %zu %s", count, ops[count - 1].function);
}

static const char *one(const char *function, const char *schema)
{
	const char *functions[] = { function };
	const char *schemas[] = { schema };
	return validate(function ? functions : NULL, function ? 1 : 0, schemas, 1);
}

static void names(void)
{
	CHECK_STR(one(NULL, "my_ops::relu(Tensor x) -> Tensor"), "ok 1 relu", "the name comes from the schema");
	CHECK_STR(one("my_relu", "my_ops::relu(Tensor x) -> Tensor"), "ok 1 my_relu", "an explicit name wins");
	CHECK_STR(one("relu-op", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'relu-op' is not a C identifier (letters, digits and '_', "
	          "not starting with a digit)", "a name that is no identifier");
	CHECK_STR(one("1relu", "a::b() -> Tensor"),
	          "error 0: op 1: function name '1relu' is not a C identifier (letters, digits and '_', "
	          "not starting with a digit)", "a name starting with a digit");
	CHECK_STR(one("", "a::b() -> Tensor"), "error 0: op 1: the function name is empty", "an empty name");
	CHECK_STR(one("relu\"); system(\"x", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'relu\"); system(\"x' is not a C identifier (letters, "
	          "digits and '_', not starting with a digit)", "code in a name never reaches the wrapper");
	CHECK_STR(one("a234567890123456789012345678901", "a::b() -> Tensor"), "ok 1 a234567890123456789012345678901",
	          "31 characters are allowed");
	CHECK_STR(one("a2345678901234567890123456789012", "a::b() -> Tensor"),
	          "error 0: op 1: CustomOp function name is too long: 'a2345678901234567890123456789012' "
	          "has 32 characters. Must be less than 32 characters.", "32 characters are not");
	CHECK_STR(one("int", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'int' is a C or C++ keyword; choose another name", "a C keyword");
	CHECK_STR(one("class", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'class' is a C or C++ keyword; choose another name", "a C++ keyword");
	CHECK_STR(one(NULL, "a::delete() -> Tensor"),
	          "error 0: op 1: function name 'delete' is a C or C++ keyword; choose another name",
	          "a keyword taken from the schema");
	CHECK_STR(one("_Relu", "a::b() -> Tensor"),
	          "error 0: op 1: function name '_Relu' is reserved for the C++ implementation (it begins "
	          "with '__' or '_' and a capital); choose another name", "a reserved identifier");
	CHECK_STR(one("re__lu", "a::b() -> Tensor"),
	          "error 0: op 1: function name 're__lu' contains '__', which C++ reserves; choose another "
	          "name", "a double underscore");
	CHECK_STR(one("main", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'main' is the program's entry point in C++ and cannot "
	          "return a Tensor; choose another name", "main is refused");
	const char *header[] = { "wrapper_fn", "at", "std", "torch", "c10", "neuron_host",
	                         "uint32_t", "size_t", "pthread_mutex_t", "timezone",
	                         "PTHREAD_MUTEX_NORMAL", "STACK_SIZE", "NULL", "assert" };
	for (size_t i = 0; i < sizeof header / sizeof header[0]; i++)
		CHECK_STR(one(header[i], "a::b() -> Tensor"),
		          arena_printf(&arena, "error 0: op 1: function name '%s' is a type, variable, "
		                       "constant, namespace or macro that the SDK's or the C library's "
		                       "headers declare, so the wrapper would not compile; rename the "
		                       "kernel function, for example to '%s_kernel' (FN=%s_kernel in --op, "
		                       "in fn_names, or m.def(\"b\", SHAPE_FUNCTION, \"%s_kernel\") in a "
		                       "shape library)", header[i], header[i], header[i], header[i]),
		          arena_printf(&arena, "the header name %s is refused", header[i]));
	CHECK_STR(one("t", "a::b() -> Tensor"), "ok 1 t", "a one-letter name is fine");
	CHECK_STR(one("_t", "a::b() -> Tensor"), "ok 1 _t", "'_t' alone is fine");
	CHECK_STR(one(NULL, "a::softmax_t(Tensor x) -> Tensor"), "ok 1 softmax_t",
	          "a name ending in _t that no header declares is fine");
	CHECK_STR(one("my_type_t", "a::b() -> Tensor"), "ok 1 my_type_t", "so is another");
	const char *runtime[] = { "get_func_cnt", "get_func_name", "get_func_ptr", "switched_stack",
	                          "switchBack", "switch_stack_or_call_wrapper", "get_dst_tensor",
	                          "customop_setup", "customop_anything" };
	for (size_t i = 0; i < sizeof runtime / sizeof runtime[0]; i++)
		CHECK_STR(one(runtime[i], "a::b() -> Tensor"),
		          arena_printf(&arena, "error 0: op 1: function name '%s' is a name the runtime "
		                       "defines; choose another name", runtime[i]),
		          arena_printf(&arena, "the runtime name %s is refused", runtime[i]));
	CHECK_STR(one("switch_stack_or_call", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'switch_stack_or_call' would define "
	          "'switch_stack_or_call_wrapper', which the runtime defines; choose another name",
	          "a generated name that is a runtime name");
	CHECK_STR(one("customop", "a::b() -> Tensor"),
	          "error 0: op 1: function name 'customop' would define 'customop_wrapper', which the "
	          "runtime defines; choose another name", "a generated name with the runtime prefix");
	CHECK_STR(one(NULL, "a::abs(Tensor x) -> Tensor"),
	          "error 0: op 1: function name 'abs' is also at::abs of the kernel API: the wrapper's "
	          "call abs(...) with a Tensor argument would be ambiguous (argument-dependent lookup "
	          "finds both); rename the kernel function, for example to 'abs_kernel' "
	          "(FN=abs_kernel in --op, in fn_names, or m.def(\"abs\", SHAPE_FUNCTION, "
	          "\"abs_kernel\") in a shape library)", "a function of the kernel API is refused");
	CHECK_STR(one("abs_kernel", "a::abs(Tensor x) -> Tensor"), "ok 1 abs_kernel",
	          "the rename it gives is accepted");
	CHECK_STR(one("zeros", "a::b(Tensor x) -> Tensor"), "ok 1 zeros",
	          "a factory's name is free: no call with the wrapper's arguments reaches it");
	CHECK_STR(one("output", "a::b(Tensor x) -> Tensor"),
	          "error 0: op 1: function name 'output' is the wrapper's variable for the kernel's "
	          "result, so the call output(...) would not compile; rename the kernel function, for "
	          "example to 'output_kernel' (FN=output_kernel in --op, in fn_names, or "
	          "m.def(\"b\", SHAPE_FUNCTION, \"output_kernel\") in a shape library)",
	          "the wrapper's local variable is refused");
}

static void collisions(void)
{
	const char *schemas[] = { "a::relu(Tensor x) -> Tensor", "a::relu(Tensor x) -> Tensor" };
	CHECK_STR(validate(NULL, 0, schemas, 2),
	          "error 1: op 2: function name 'relu' is already used by op 1; each op needs its own name",
	          "duplicate names");
	const char *pair[] = { "relu", "relu_wrapper" };
	CHECK_STR(validate(pair, 2, schemas, 2),
	          "error 1: op 2: function name 'relu_wrapper' collides with op 1 ('relu'): both would "
	          "define 'relu_wrapper'; rename one of them", "an op named like another's wrapper");
	const char *reversed[] = { "relu_stack_switch", "relu" };
	CHECK_STR(validate(reversed, 2, schemas, 2),
	          "error 1: op 2: function name 'relu' collides with op 1 ('relu_stack_switch'): both "
	          "would define 'relu_stack_switch'; rename one of them",
	          "an op named like a later op's launcher");
	const char *three[] = { "a", "b", "c" };
	CHECK_STR(validate(three, 3, schemas, 2),
	          "error -1: 3 function names but 2 schemas: give exactly one function name per schema",
	          "more names than schemas is refused, not truncated");
	CHECK_STR(validate(three, 1, schemas, 2),
	          "error -1: 1 function name but 2 schemas: give exactly one function name per schema",
	          "fewer names than schemas");
	CHECK_STR(validate(NULL, 0, schemas, 0),
	          "error -1: no ops: give at least one schema, such as 'my_ops::relu(Tensor x) -> Tensor'",
	          "no ops");
}

static void limits(void)
{
	enum { MANY = 11 };
	const char *functions[0x8000];
	const char *schemas[0x8000];
	for (size_t i = 0; i < 0x8000; i++) {
		functions[i] = arena_printf(&arena, "op%zu", i);
		schemas[i] = "a::b(Tensor x) -> Tensor";
	}
	CHECK_STR(validate(functions, 10, schemas, 10), "ok 10 op9", "ten ops");
	CHECK_STR(warnings, "", "ten ops give no warning");
	CHECK_STR(validate(functions, MANY, schemas, MANY), "ok 11 op10", "eleven ops build");
	CHECK_STR(warnings, "11 ops in one library; the runtime documents at most 10 functions per library\n",
	          "eleven ops give a warning for the device");
	target = BCO_TARGET_HOST;
	CHECK_STR(validate(functions, 10, schemas, 10), "ok 10 op9", "ten ops for the host");
	CHECK_STR(validate(functions, MANY, schemas, MANY),
	          "error -1: 11 ops in one library, but the device documents at most 10 functions in a "
	          "library (and one custom-op library per model), and the host target's emulator "
	          "refuses more; keep at most 10 ops in the library", "eleven ops are an error for the host");
	target = BCO_TARGET_XTENSA;
	CHECK_STR(validate(functions, 0x7fff, schemas, 0x7fff), "ok 32767 op32766", "0x7fff ops build");
	CHECK_STR(validate(functions, 0x8000, schemas, 0x8000),
	          "error -1: 32768 ops in one library: the runtime refuses libraries with 32768 (0x8000) or "
	          "more functions; split them over several libraries", "0x8000 ops are an error");
	CHECK_STR(one(NULL, "a::f(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j) -> Tensor"),
	          "ok 1 f", "ten arguments");
	CHECK_STR(one(NULL, "a::f(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, int k) -> Tensor"),
	          "error 0: schema:76: error: 'f' takes 11 arguments; the runtime's argument parser holds "
	          "at most 10\na::f(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, "
	          "int k) -> Tensor\n                                                                           ^",
	          "eleven arguments are an error pointing at the eleventh");
}

int main(void)
{
	if (setjmp(out_of_memory)) {
		puts("not ok - out of memory");
		return 1;
	}
	arena_init(&arena, &out_of_memory);
	names();
	collisions();
	limits();
	arena_release(&arena);
	return check_failures != 0;
}
