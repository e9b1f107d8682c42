/* codegen.c - ops to wrapper.cpp text, and the ops record of host builds. */
#include "codegen.h"

#include "arena.h"
#include "buffer.h"
#include "validate.h"

/* What each argument kind becomes in the generated C++. */
static const struct {
	const char *parameter; /* the kernel's parameter type */
	const char *next_call; /* the marshalling call that produces it */
	char letter;           /* its letter in the ops record */
} kinds[] = {
	[ARG_TENSOR] = { "const at::Tensor&", "customop_next_tensor()", 'T' },
	[ARG_SCALAR] = { "const at::Scalar&", "customop_next_scalar()", 'S' },
	[ARG_INT] = { "int", "customop_next_int()", 'i' },
	[ARG_FLOAT] = { "float", "customop_next_float()", 'f' },
	[ARG_LONG_LONG] = { "long long", "customop_next_longlong()", 'l' },
};

char *codegen_declaration(struct arena *arena, const struct op *op)
{
	struct buffer out;
	buffer_init(&out, arena);
	buffer_printf(&out, "at::Tensor %s(", op->function);
	for (size_t i = 0; i < op->schema.arg_count; i++)
		buffer_printf(&out, "%s%s", i ? ", " : "", kinds[op->schema.args[i].kind].parameter);
	buffer_putc(&out, ')');
	return out.data;
}

static void emit_op(struct buffer *out, const struct op *op, const char *tail)
{
	const char *fn = op->function;
	const struct schema *schema = &op->schema;

	buffer_printf(out, "%s;\n\n", codegen_declaration(out->arena, op));

	buffer_printf(out, "void %s_wrapper() {\n", fn);
	buffer_puts(out, "    customop_setup(true);\n");
	buffer_printf(out, "    at::Tensor output = %s(", fn);
	for (size_t i = 0; i < schema->arg_count; i++)
		buffer_printf(out, "%s%s", i ? ", " : "", kinds[schema->args[i].kind].next_call);
	buffer_puts(out, ");\n");
	buffer_puts(out, "    customop_return_tensor(output);\n");
	buffer_puts(out, "    customop_cleanup();\n");
	buffer_puts(out, tail);
	buffer_puts(out, "}\n\n");

	buffer_printf(out, "int %s_stack_switch() {\n", fn);
	buffer_printf(out, "    return switch_stack_or_call_wrapper((uint32_t)%s_wrapper);\n", fn);
	buffer_puts(out, "}\n\n");
}

char *codegen_wrapper(struct arena *arena, const struct op *ops, size_t count,
                      const char *stack_switch_tail)
{
	struct buffer out;
	buffer_init(&out, arena);
	buffer_puts(&out, CODEGEN_BANNER);
	buffer_puts(&out, "#include \"neuron/wrapper_api.h\"\n\n");
	for (size_t i = 0; i < count; i++)
		emit_op(&out, &ops[i], stack_switch_tail);

	buffer_printf(&out, "int get_func_cnt() { return %zu; }\n\n", count);

	buffer_puts(&out, "char const* get_func_name(int idx) {\n    switch (idx) {\n");
	for (size_t i = 0; i < count; i++)
		buffer_printf(&out, "        case %zu: return \"%s\";\n", i, ops[i].function);
	buffer_puts(&out, "        default: return \"error\";\n    }\n}\n\n");

	buffer_puts(&out, "wrapper_fn get_func_ptr(int idx) {\n    switch (idx) {\n");
	for (size_t i = 0; i < count; i++)
		buffer_printf(&out, "        case %zu: return %s_stack_switch;\n", i, ops[i].function);
	buffer_puts(&out, "        default: return 0;\n    }\n}\n");
	return out.data;
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
