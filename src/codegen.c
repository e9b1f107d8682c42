/* codegen.c - ops to wrapper.cpp text, and the ops record of host builds. */
#include "codegen.h"

#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "validate.h"

/* A piece of text and its length, known when compiling. */
struct text {
	const char *data;
	size_t length;
};
#define TEXT(literal) { "" literal, sizeof(literal) - 1 }

/* What each argument kind becomes in the generated C++. */
static const struct {
	struct text parameter; /* the kernel's parameter type */
	struct text next_call; /* the marshalling call that produces it */
	char letter;           /* its letter in the ops record */
} kinds[] = {
	[ARG_TENSOR] = { TEXT("const at::Tensor&"), TEXT("customop_next_tensor()"), 'T' },
	[ARG_SCALAR] = { TEXT("const at::Scalar&"), TEXT("customop_next_scalar()"), 'S' },
	[ARG_INT] = { TEXT("int"), TEXT("customop_next_int()"), 'i' },
	[ARG_FLOAT] = { TEXT("float"), TEXT("customop_next_float()"), 'f' },
	[ARG_LONG_LONG] = { TEXT("long long"), TEXT("customop_next_longlong()"), 'l' },
};

/* The text is written with appends, not formatted, in two passes over the
 * same code: the first only counts, so that the second writes into memory
 * of the exact size, once (a library of 10,000 ops is 5 MB of text). */
struct sink {
	char *data; /* NULL while counting */
	size_t length;
};

static inline void put(struct sink *out, const char *bytes, size_t length)
{
	if (out->data)
		memcpy(out->data + out->length, bytes, length);
	out->length += length;
}

/* A literal's length is known when compiling, so its copy is a few moves. */
#define put_literal(out, literal) put((out), "" literal, sizeof(literal) - 1)

static void put_text(struct sink *out, struct text text)
{
	put(out, text.data, text.length);
}

static void put_decimal(struct sink *out, size_t value)
{
	char digits[3 * sizeof value];
	size_t start = sizeof digits;
	do {
		digits[--start] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	put(out, digits + start, sizeof digits - start);
}

/* Appends "at::Tensor fn(const at::Tensor&, int)". */
static void put_declaration(struct sink *out, const char *fn, size_t fn_length,
                            const struct schema *schema)
{
	put_literal(out, "at::Tensor ");
	put(out, fn, fn_length);
	put_literal(out, "(");
	for (size_t i = 0; i < schema->arg_count; i++) {
		if (i)
			put_literal(out, ", ");
		put_text(out, kinds[schema->args[i].kind].parameter);
	}
	put_literal(out, ")");
}

char *codegen_declaration(struct arena *arena, const struct op *op)
{
	size_t fn_length = strlen(op->function);
	struct sink out = { NULL, 0 };
	put_declaration(&out, op->function, fn_length, &op->schema);
	out.data = arena_alloc(arena, out.length + 1);
	out.length = 0;
	put_declaration(&out, op->function, fn_length, &op->schema);
	return out.data;
}

static void put_op(struct sink *out, const struct op *op, struct text tail)
{
	const char *fn = op->function;
	size_t fn_length = strlen(fn);
	const struct schema *schema = &op->schema;

	put_declaration(out, fn, fn_length, schema);
	put_literal(out, ";\n\n");

	put_literal(out, "void ");
	put(out, fn, fn_length);
	put_literal(out, "_wrapper() {\n"
	                 "    customop_setup(true);\n"
	                 "    at::Tensor output = ");
	put(out, fn, fn_length);
	put_literal(out, "(");
	for (size_t i = 0; i < schema->arg_count; i++) {
		if (i)
			put_literal(out, ", ");
		put_text(out, kinds[schema->args[i].kind].next_call);
	}
	put_literal(out, ");\n"
	                 "    customop_return_tensor(output);\n"
	                 "    customop_cleanup();\n");
	put_text(out, tail);
	put_literal(out, "}\n\n");

	put_literal(out, "int ");
	put(out, fn, fn_length);
	put_literal(out, "_stack_switch() {\n"
	                 "    return switch_stack_or_call_wrapper((uint32_t)");
	put(out, fn, fn_length);
	put_literal(out, "_wrapper);\n"
	                 "}\n\n");
}

/* "        case I" + before + the op's function + after, for each op: the
 * cases of the registration table's switches. */
static void put_cases(struct sink *out, const struct op *ops, size_t count, struct text before,
                      struct text after)
{
	for (size_t i = 0; i < count; i++) {
		put_literal(out, "        case ");
		put_decimal(out, i);
		put_text(out, before);
		put(out, ops[i].function, strlen(ops[i].function));
		put_text(out, after);
	}
}

static void put_wrapper(struct sink *out, const struct op *ops, size_t count, struct text tail)
{
	put_literal(out, CODEGEN_BANNER "#include \"neuron/wrapper_api.h\"\n\n");
	for (size_t i = 0; i < count; i++)
		put_op(out, &ops[i], tail);

	put_literal(out, "int get_func_cnt() { return ");
	put_decimal(out, count);
	put_literal(out, "; }\n\n");

	put_literal(out, "char const* get_func_name(int idx) {\n    switch (idx) {\n");
	put_cases(out, ops, count, (struct text)TEXT(": return \""), (struct text)TEXT("\";\n"));
	put_literal(out, "        default: return \"error\";\n    }\n}\n\n");

	put_literal(out, "wrapper_fn get_func_ptr(int idx) {\n    switch (idx) {\n");
	put_cases(out, ops, count, (struct text)TEXT(": return "),
	          (struct text)TEXT("_stack_switch;\n"));
	put_literal(out, "        default: return 0;\n    }\n}\n");
}

size_t codegen_wrapper_length(const struct op *ops, size_t count, const char *stack_switch_tail)
{
	struct text tail = { stack_switch_tail, strlen(stack_switch_tail) };
	struct sink out = { NULL, 0 };
	put_wrapper(&out, ops, count, tail);
	return out.length;
}

void codegen_wrapper_write(char *text, const struct op *ops, size_t count,
                           const char *stack_switch_tail)
{
	struct text tail = { stack_switch_tail, strlen(stack_switch_tail) };
	struct sink out = { text, 0 };
	put_wrapper(&out, ops, count, tail);
	text[out.length] = '\0';
}

char *codegen_wrapper(struct arena *arena, const struct op *ops, size_t count,
                      const char *stack_switch_tail)
{
	size_t length = codegen_wrapper_length(ops, count, stack_switch_tail);
	char *text = arena_alloc(arena, length + 1);
	codegen_wrapper_write(text, ops, count, stack_switch_tail);
	return text;
}

char *codegen_ops_record(struct arena *arena, const struct op *ops, size_t count,
                         char *const *libraries, char *const *ids, size_t library_count)
{
	struct buffer out;
	buffer_init(&out, arena);
	buffer_puts(&out, "# build-custom-op ops 2\n");
	buffer_printf(&out, "cores %zu\n", library_count);
	for (size_t i = 0; i < library_count; i++)
		buffer_printf(&out, "library %s %s\n", libraries[i], ids[i]);
	for (size_t i = 0; i < count; i++) {
		buffer_printf(&out, "%s\t", ops[i].function);
		for (size_t a = 0; a < ops[i].schema.arg_count; a++)
			buffer_putc(&out, kinds[ops[i].schema.args[a].kind].letter);
		buffer_printf(&out, "\t%s\n", schema_signature(arena, &ops[i].schema));
	}
	return out.data;
}
