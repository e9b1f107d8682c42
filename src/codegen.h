/* codegen.h - ops to wrapper.cpp text, and the ops record of host builds. */
#ifndef CODEGEN_H
#define CODEGEN_H

#include <stddef.h>

struct arena;
struct op;

/* The first line of every generated wrapper.cpp. */
#define CODEGEN_BANNER "// WARNING: AUTO GENERATED DO NOT EDIT\n"

/* Returns wrapper.cpp for ops: per op a forward declaration, <fn>_wrapper()
 * and <fn>_stack_switch(), then the registration table.  stack_switch_tail
 * is the end of each <fn>_wrapper body (the target decides it). */
char *codegen_wrapper(struct arena *arena, const struct op *ops, size_t count,
                      const char *stack_switch_tail);
/* The length of that text, without the NUL. */
size_t codegen_wrapper_length(const struct op *ops, size_t count, const char *stack_switch_tail);
/* Writes that text and a NUL into text, which holds codegen_wrapper_length()
 * + 1 bytes; allocates nothing. */
void codegen_wrapper_write(char *text, const struct op *ops, size_t count,
                           const char *stack_switch_tail);
/* Returns the kernel's declaration, "at::Tensor relu(const at::Tensor&)". */
char *codegen_declaration(struct arena *arena, const struct op *op);
/* Returns the <name>.ops record (version 2; run/opsfile.h describes it):
 * "# build-custom-op ops 2", "cores N", per core library "library <file
 * name> <id>" (libraries and ids, in core order), then per op
 * "<fn>\t<kinds>\t<signature>" (kinds: T Tensor, S Scalar, i int, f float,
 * l long long). */
char *codegen_ops_record(struct arena *arena, const struct op *ops, size_t count,
                         char *const *libraries, char *const *ids, size_t library_count);

#endif
