/* validate.c - from (function name, schema) pairs to checked ops. */
#include "validate.h"

#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "diag.h"

static const char *const keywords[] = {
	/* C11 */
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
	"typedef", "union", "unsigned", "void", "volatile", "while",
	/* C++ (through C++20), with the alternative tokens */
	"alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch",
	"char8_t", "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr",
	"constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
	"dynamic_cast", "explicit", "export", "false", "friend", "mutable", "namespace", "new",
	"noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
	"public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template",
	"this", "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual",
	"wchar_t", "xor", "xor_eq",
};

/* Names the runtime and the generated table define; customop_ is a prefix. */
static const char *const runtime_names[] = {
	"get_func_cnt", "get_func_name", "get_func_ptr", "switched_stack", "switchBack",
	"switch_stack_or_call_wrapper", "get_dst_tensor",
};

/* Names that wrapper.cpp sees through neuron/wrapper_api.h (the SDK's
 * headers and the C and C++ libraries they include) as something other than
 * a function: a type, variable, enumerator, namespace or macro.  A function
 * of that name would not compile.  tests/cli/test_op_names.sh derives the
 * types, variables, enumerators and namespaces from the host SDK's headers
 * with the host's C library (one compile that declares a function of every
 * name), and checks that each is here; a name ending in _t that is not
 * declared there (softmax_t) is a free name. */
static const char *const header_names[] = {
	/* the SDK's */
	"wrapper_fn", "at", "c10", "std", "torch", "neuron_host", "STACK_SIZE", "MAX_STACK_SIZE",
	/* macros of the C library */
	"NULL", "EOF", "assert", "errno", "offsetof", "va_list", "FILE", "stdin", "stdout", "stderr",
	"INT8_MAX", "INT16_MAX", "INT32_MAX", "INT64_MAX", "UINT8_MAX", "UINT16_MAX",
	"UINT32_MAX", "UINT64_MAX", "SIZE_MAX",
	/* types of the C library (<stddef.h>, <stdint.h>, <time.h>, <wchar.h>,
	 * <pthread.h> and <sched.h>, which the C++ library brings in) */
	"size_t", "ptrdiff_t", "max_align_t", "nullptr_t", "int8_t", "int16_t", "int32_t",
	"int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int_least8_t", "int_least16_t",
	"int_least32_t", "int_least64_t", "uint_least8_t", "uint_least16_t", "uint_least32_t",
	"uint_least64_t", "int_fast8_t", "int_fast16_t", "int_fast32_t", "int_fast64_t",
	"uint_fast8_t", "uint_fast16_t", "uint_fast32_t", "uint_fast64_t", "intmax_t", "uintmax_t",
	"intptr_t", "uintptr_t", "clock_t", "clockid_t", "time_t", "timer_t", "locale_t", "pid_t",
	"mbstate_t", "wint_t", "cpu_set_t", "pthread_t", "pthread_attr_t", "pthread_barrier_t",
	"pthread_barrierattr_t", "pthread_cond_t", "pthread_condattr_t", "pthread_key_t",
	"pthread_mutex_t", "pthread_mutexattr_t", "pthread_once_t", "pthread_rwlock_t",
	"pthread_rwlockattr_t", "pthread_spinlock_t",
	/* variables of <time.h> */
	"daylight", "timezone", "tzname", "getdate_err",
	/* enumerators of <pthread.h> */
	"PTHREAD_CANCEL_ASYNCHRONOUS", "PTHREAD_CANCEL_DEFERRED", "PTHREAD_CANCEL_DISABLE",
	"PTHREAD_CANCEL_ENABLE", "PTHREAD_CREATE_DETACHED", "PTHREAD_CREATE_JOINABLE",
	"PTHREAD_EXPLICIT_SCHED", "PTHREAD_INHERIT_SCHED", "PTHREAD_MUTEX_ADAPTIVE_NP",
	"PTHREAD_MUTEX_DEFAULT", "PTHREAD_MUTEX_ERRORCHECK", "PTHREAD_MUTEX_ERRORCHECK_NP",
	"PTHREAD_MUTEX_FAST_NP", "PTHREAD_MUTEX_NORMAL", "PTHREAD_MUTEX_RECURSIVE",
	"PTHREAD_MUTEX_RECURSIVE_NP", "PTHREAD_MUTEX_ROBUST", "PTHREAD_MUTEX_ROBUST_NP",
	"PTHREAD_MUTEX_STALLED", "PTHREAD_MUTEX_STALLED_NP", "PTHREAD_MUTEX_TIMED_NP",
	"PTHREAD_PRIO_INHERIT", "PTHREAD_PRIO_NONE", "PTHREAD_PRIO_PROTECT",
	"PTHREAD_PROCESS_PRIVATE", "PTHREAD_PROCESS_SHARED", "PTHREAD_RWLOCK_DEFAULT_NP",
	"PTHREAD_RWLOCK_PREFER_READER_NP", "PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP",
	"PTHREAD_RWLOCK_PREFER_WRITER_NP", "PTHREAD_SCOPE_PROCESS", "PTHREAD_SCOPE_SYSTEM",
};
static const char runtime_prefix[] = "customop_";

/* The functions of the kernel API in at:: (and so in torch::, which takes
 * at's names) that the wrapper's call of a kernel of the same name reaches
 * through argument-dependent lookup, with a Tensor or Scalar argument: the
 * call is then ambiguous.  The factories (empty, zeros, ...) and the _out
 * forms are not among them: no argument the wrapper passes can bind to
 * their first parameter, so those names compile.  The list follows the host
 * SDK's headers: tests/cli/test_op_names.sh derives it from them, and
 * compiles a wrapper for each name to show that it fails. */
static const char *const kernel_api_functions[] = {
	"abs", "add", "bitwise_and", "bitwise_not", "bitwise_or", "ceil", "clamp", "cos", "div",
	"exp", "floor", "log", "log10", "log2", "mul", "pow", "sin", "sub", "tan",
};

/* The generated <fn>_wrapper() holds the kernel's result in this local. */
static const char wrapper_local[] = "output";

/* The lists above as one hash table, made once per call (in the arena), so
 * that each of thousands of names is checked with one lookup. */
enum reserved_kind {
	RESERVED_KEYWORD = 1,
	RESERVED_RUNTIME = 2,
	RESERVED_HEADER = 4,
	RESERVED_KERNEL_API = 8,
};

struct reserved_name {
	const char *name; /* NULL in a free slot */
	unsigned kinds;   /* of enum reserved_kind */
};

enum { RESERVED_SLOTS = 1024 }; /* a power of two, over twice the names of the lists */

struct reserved_names {
	struct reserved_name *slots;
};

static uint32_t hash_name(const char *name)
{
	uint32_t hash = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		hash = (hash ^ *p) * 16777619u;
	return hash;
}

/* The slot of name: the one holding it, or the free one where it goes. */
static struct reserved_name *reserved_slot(const struct reserved_names *reserved, const char *name)
{
	for (size_t i = hash_name(name) & (RESERVED_SLOTS - 1);; i = (i + 1) & (RESERVED_SLOTS - 1))
		if (!reserved->slots[i].name || strcmp(reserved->slots[i].name, name) == 0)
			return &reserved->slots[i];
}

static void reserved_add(struct reserved_names *reserved, const char *const *names, size_t count,
                         unsigned kind)
{
	for (size_t i = 0; i < count; i++) {
		struct reserved_name *slot = reserved_slot(reserved, names[i]);
		slot->name = names[i];
		slot->kinds |= kind;
	}
}

#define RESERVED_ADD(reserved, list, kind) \
	reserved_add((reserved), (list), sizeof(list) / sizeof((list)[0]), (kind))

static void reserved_names_init(struct arena *arena, struct reserved_names *reserved)
{
	reserved->slots = arena_array(arena, RESERVED_SLOTS, sizeof *reserved->slots);
	RESERVED_ADD(reserved, keywords, RESERVED_KEYWORD);
	RESERVED_ADD(reserved, runtime_names, RESERVED_RUNTIME);
	RESERVED_ADD(reserved, header_names, RESERVED_HEADER);
	RESERVED_ADD(reserved, kernel_api_functions, RESERVED_KERNEL_API);
}

/* The lists name is on, as enum reserved_kind bits; 0 for none. */
static unsigned reserved_kinds(const struct reserved_names *reserved, const char *name)
{
	return reserved_slot(reserved, name)->kinds;
}

static int is_runtime_name(const struct reserved_names *reserved, const char *name)
{
	return strncmp(name, runtime_prefix, sizeof runtime_prefix - 1) == 0 ||
	       (reserved_kinds(reserved, name) & RESERVED_RUNTIME);
}

static int is_identifier(const char *name)
{
	if (!((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_'))
		return 0;
	for (const char *p = name + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/* The suffixes of the names each op defines: fn, fn_wrapper, fn_stack_switch. */
static const char *const suffixes[3] = { "", "_wrapper", "_stack_switch" };

/* A set of the C++ names the generated code defines, each with the op that
 * defines it: open addressing, so checking 10,000 ops stays linear.  A slot
 * holds the name's hash and which op and suffix make it, so that no name is
 * built and the table stays small (8 bytes a slot). */
struct name_entry {
	uint32_t hash;
	uint32_t claim; /* op * 3 + suffix + 1; 0 in a free slot */
};

struct name_set {
	struct name_entry *slots;
	size_t capacity; /* a power of two, at least twice the entries */
	const struct op *ops;
	const struct reserved_names *reserved;
};

/* Returns 1 when name is function followed by suffix. */
static int is_joined(const char *name, const char *function, const char *suffix)
{
	size_t length = strlen(function);
	return strncmp(name, function, length) == 0 && strcmp(name + length, suffix) == 0;
}

/* Inserts name, made of op's function name and suffix number suffix;
 * returns the op that already defines it, or -1. */
static long name_set_insert(struct name_set *set, const char *name, size_t op, size_t suffix)
{
	uint32_t hash = hash_name(name);
	size_t mask = set->capacity - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct name_entry *slot = &set->slots[i];
		if (!slot->claim) {
			slot->hash = hash;
			slot->claim = (uint32_t)(op * 3 + suffix + 1);
			return -1;
		}
		size_t other = (slot->claim - 1) / 3;
		if (slot->hash == hash &&
		    is_joined(name, set->ops[other].function, suffixes[(slot->claim - 1) % 3]))
			return (long)other;
	}
}

/* How to rename the kernel function of op (whose schema names it op_name),
 * in each way a kernel function is named: build-custom-op's --op, compile()'s
 * fn_names and a shape library's m.def. */
#define RENAME_FORMAT "rename the kernel function, for example to '%s_kernel' (FN=%s_kernel in " \
	"--op, in fn_names, or m.def(\"%s\", SHAPE_FUNCTION, \"%s_kernel\") in a shape library)"
#define RENAME_ARGUMENTS(name, op_name) (name), (name), (op_name), (name)

/* The checks on one function name alone (of the op op_name). */
static int check_function_name(const struct reserved_names *reserved, const char *name,
                               const char *op_name, size_t index, struct diag *diag)
{
	diag->schema_index = (int)index;
	if (!*name)
		return diag_fail(diag, BCO_ERROR_INPUT, "op %zu: the function name is empty", index + 1);
	if (!is_identifier(name))
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' is not a C identifier "
		                 "(letters, digits and '_', not starting with a digit)",
		                 index + 1, name);
	size_t length = strlen(name);
	if (length >= FUNCTION_NAME_LIMIT)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: CustomOp function name is too long: '%s' has %zu characters. "
		                 "Must be less than %d characters.",
		                 index + 1, name, length, FUNCTION_NAME_LIMIT);
	unsigned kinds = reserved_kinds(reserved, name);
	if (kinds & RESERVED_KEYWORD)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' is a C or C++ keyword; choose another name",
		                 index + 1, name);
	if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' is reserved for the C++ implementation "
		                 "(it begins with '__' or '_' and a capital); choose another name",
		                 index + 1, name);
	if (strcmp(name, "main") == 0)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name 'main' is the program's entry point in C++ and "
		                 "cannot return a Tensor; choose another name", index + 1);
	if (kinds & RESERVED_HEADER)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' is a type, variable, constant, namespace or "
		                 "macro that the SDK's or the C library's headers declare, so the "
		                 "wrapper would not compile; " RENAME_FORMAT,
		                 index + 1, name, RENAME_ARGUMENTS(name, op_name));
	if (kinds & RESERVED_KERNEL_API)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' is also at::%s of the kernel API: the "
		                 "wrapper's call %s(...) with a Tensor argument would be ambiguous "
		                 "(argument-dependent lookup finds both); " RENAME_FORMAT,
		                 index + 1, name, name, name, RENAME_ARGUMENTS(name, op_name));
	if (strcmp(name, wrapper_local) == 0)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name 'output' is the wrapper's variable for the "
		                 "kernel's result, so the call output(...) would not compile; "
		                 RENAME_FORMAT, index + 1, RENAME_ARGUMENTS(name, op_name));
	if (strstr(name, "__"))
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' contains '__', which C++ reserves; "
		                 "choose another name", index + 1, name);
	diag->schema_index = -1;
	return 0;
}

/* Claims the names op index defines (fn, fn_wrapper, fn_stack_switch).  The
 * function name is shorter than FUNCTION_NAME_LIMIT (checked before), so
 * each name is joined on the stack. */
static int claim_generated_names(struct name_set *names, size_t index, struct diag *diag)
{
	const char *function = names->ops[index].function;
	size_t length = strlen(function);
	char generated[FUNCTION_NAME_LIMIT + sizeof "_stack_switch"];
	if (length >= FUNCTION_NAME_LIMIT)
		return diag_fail(diag, BCO_ERROR_INPUT, "op %zu: function name '%s' is too long",
		                 index + 1, function);
	memcpy(generated, function, length + 1);
	for (size_t i = 0; i < 3; i++) {
		strcpy(generated + length, suffixes[i]);
		diag->schema_index = (int)index;
		if (i == 0 && is_runtime_name(names->reserved, function))
			return diag_fail(diag, BCO_ERROR_INPUT,
			                 "op %zu: function name '%s' is a name the runtime defines; "
			                 "choose another name", index + 1, function);
		if (is_runtime_name(names->reserved, generated))
			return diag_fail(diag, BCO_ERROR_INPUT,
			                 "op %zu: function name '%s' would define '%s', which the runtime "
			                 "defines; choose another name", index + 1, function, generated);
		long taken = name_set_insert(names, generated, index, i);
		if (taken < 0)
			continue;
		const char *other = names->ops[taken].function;
		if (strcmp(other, function) == 0)
			return diag_fail(diag, BCO_ERROR_INPUT,
			                 "op %zu: function name '%s' is already used by op %ld; "
			                 "each op needs its own name", index + 1, function, taken + 1);
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "op %zu: function name '%s' collides with op %ld ('%s'): both would "
		                 "define '%s'; rename one of them", index + 1, function, taken + 1,
		                 other, generated);
	}
	diag->schema_index = -1;
	return 0;
}

int validate_ops(struct arena *arena, enum bco_target target, const char *const *functions,
                 size_t function_count, const char *const *schemas, size_t schema_count,
                 bco_progress_fn progress, void *progress_context, struct op **ops_out,
                 size_t *count_out, struct diag *diag)
{
	if (functions && function_count != schema_count)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "%zu function name%s but %zu schema%s: give exactly one function "
		                 "name per schema", function_count, function_count == 1 ? "" : "s",
		                 schema_count, schema_count == 1 ? "" : "s");
	if (schema_count == 0)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "no ops: give at least one schema, such as "
		                 "'my_ops::relu(Tensor x) -> Tensor'");
	if (schema_count >= OPS_HARD_LIMIT)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "%zu ops in one library: the runtime refuses libraries with %d (0x8000) "
		                 "or more functions; split them over several libraries",
		                 schema_count, OPS_HARD_LIMIT);
	if (schema_count > OPS_DOCUMENTED_LIMIT && target == BCO_TARGET_HOST)
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "%zu ops in one library, but the device documents at most %d functions "
		                 "in a library (and one custom-op library per model), and the host "
		                 "target's emulator refuses more; keep at most %d ops in the library",
		                 schema_count, OPS_DOCUMENTED_LIMIT, OPS_DOCUMENTED_LIMIT);

	struct op *ops = arena_array(arena, schema_count, sizeof *ops);
	struct reserved_names reserved;
	reserved_names_init(arena, &reserved);
	struct name_set names = { NULL, 16, ops, &reserved };
	while (names.capacity < schema_count * 3 * 2)
		names.capacity *= 2;
	names.slots = arena_array(arena, names.capacity, sizeof *names.slots);

	for (size_t i = 0; i < schema_count; i++) {
		struct op *op = &ops[i];
		if (!schemas[i])
			return diag_fail(diag, BCO_ERROR_USAGE, "op %zu: the schema is missing", i + 1);
		if (schema_parse(arena, schemas[i], (int)i, &op->schema, diag) != 0)
			return -1;
		op->function = functions && functions[i] ? functions[i] : op->schema.name;
		if (check_function_name(&reserved, op->function, op->schema.name, i, diag) != 0)
			return -1;
		if (op->schema.arg_count > OP_ARGUMENT_LIMIT)
			return schema_fail_at(diag, schemas[i], (int)i,
			                      op->schema.args[OP_ARGUMENT_LIMIT].offset,
			                      "'%s' takes %zu arguments; the runtime's argument parser "
			                      "holds at most %d", op->function, op->schema.arg_count,
			                      OP_ARGUMENT_LIMIT);
		if (claim_generated_names(&names, i, diag) != 0)
			return -1;
	}
	if (schema_count > OPS_DOCUMENTED_LIMIT && progress)
		progress(progress_context, BCO_MESSAGE_WARNING,
		         arena_printf(arena, "%zu ops in one library; the runtime documents at most %d "
		                      "functions per library", schema_count, OPS_DOCUMENTED_LIMIT));
	*ops_out = ops;
	*count_out = schema_count;
	return 0;
}
