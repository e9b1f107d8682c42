/* plan.c - the steps of one build: their commands, inputs, outputs and order. */
#include "plan.h"

#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "fsutil.h"
#include "target.h"

enum { CORE_COUNT = 8 };

/* Room for a plan's steps, grown by add_step. */
struct plan_builder {
	struct arena *arena;
	struct plan *plan;
	size_t capacity;
};

static struct step *add_step(struct plan_builder *builder, const char *action, const char *target)
{
	struct plan *plan = builder->plan;
	if (plan->step_count == builder->capacity) {
		size_t capacity = builder->capacity ? builder->capacity * 2 : 16;
		struct step *steps = arena_array(builder->arena, capacity, sizeof *steps);
		struct step_files *files = arena_array(builder->arena, capacity, sizeof *files);
		if (plan->step_count) {
			memcpy(steps, plan->steps, plan->step_count * sizeof *steps);
			memcpy(files, plan->files, plan->step_count * sizeof *files);
		}
		plan->steps = steps;
		plan->files = files;
		builder->capacity = capacity;
	}
	struct step *step = &plan->steps[plan->step_count++];
	step->action = action;
	step->target = target;
	step->state = STEP_PENDING;
	return step;
}

static char **one(struct arena *arena, char *item)
{
	char **list = arena_array(arena, 2, sizeof(char *));
	list[0] = item;
	return list;
}

/* The object of source: <build>/<basename without extension>.o */
static char *object_of(struct arena *arena, const char *build_dir, const char *source)
{
	const char *base = fs_basename(source);
	const char *dot = strrchr(base, '.');
	size_t length = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	return arena_printf(arena, "%s/%.*s.o", build_dir, (int)length, base);
}

static char *with_suffix(struct arena *arena, const char *object, const char *suffix)
{
	return arena_printf(arena, "%.*s%s", (int)(strlen(object) - 2), object, suffix);
}

static void add_compile(struct plan_builder *builder, const struct toolchain *toolchain,
                        const char *source, char *object, int is_wrapper)
{
	struct arena *arena = builder->arena;
	struct step *step = add_step(builder, "CC", source);
	struct strvec argv;
	strvec_init(&argv, arena);
	target_compile_command(toolchain, source, object, is_wrapper, &argv);
	step->argv = argv.items;
	step->outputs = one(arena, object);
	step->output_count = 1;
	struct step_files *files = &builder->plan->files[builder->plan->step_count - 1];
	files->source = source;
	files->depfile = with_suffix(arena, object, ".d");
	files->inputs = one(arena, (char *)source);
	files->input_count = 1;
}

/* Every file named on a link command: the words that are not options (the
 * objects, the SDK's archives and objects), and the linker spec of -mlsp=,
 * a directory.  The compiler's own words and the output are not inputs. */
static void link_inputs(struct arena *arena, const struct toolchain *toolchain, char **argv,
                        struct step_files *files)
{
	struct strvec inputs;
	strvec_init(&inputs, arena);
	for (size_t i = toolchain->compiler_words; argv[i]; i++) {
		if (strcmp(argv[i], "-o") == 0 && argv[i + 1])
			i++;
		else if (strncmp(argv[i], "-mlsp=", 6) == 0)
			strvec_push(&inputs, argv[i] + 6);
		else if (argv[i][0] != '-')
			strvec_push(&inputs, argv[i]);
	}
	files->inputs = inputs.items;
	files->input_count = inputs.length;
}

const char *plan_output_name(const struct plan *plan, const char *output)
{
	return output + plan->build_dir_length + 1;
}

int plan_build(struct arena *arena, const struct toolchain *toolchain, const char *build_dir,
               const char *name, const char *const *sources, size_t source_count,
               int multicore, int pack, struct plan *plan, struct diag *diag)
{
	memset(plan, 0, sizeof *plan);
	struct plan_builder builder = { arena, plan, 0 };
	plan->build_dir_length = strlen(build_dir);
	char *wrapper_object = arena_printf(arena, "%s/wrapper.o", build_dir);
	char **objects = arena_array(arena, source_count + 2, sizeof(char *));

	for (size_t i = 0; i < source_count; i++) {
		objects[i] = object_of(arena, build_dir, sources[i]);
		if (strcmp(objects[i], wrapper_object) == 0)
			return diag_fail(diag, BCO_ERROR_INPUT,
			                 "source %s would compile to %s, the generated wrapper's object; "
			                 "rename the source", sources[i], wrapper_object);
		for (size_t j = 0; j < i; j++)
			if (strcmp(objects[i], objects[j]) == 0)
				return diag_fail(diag, BCO_ERROR_INPUT,
				                 "sources %s and %s would both compile to %s; rename one of "
				                 "them (objects are named after the source's base name)",
				                 sources[j], sources[i], objects[i]);
		add_compile(&builder, toolchain, sources[i], objects[i], 0);
	}
	plan->wrapper_source = arena_printf(arena, "%s/wrapper.cpp", build_dir);
	objects[source_count] = wrapper_object;
	add_compile(&builder, toolchain, plan->wrapper_source, wrapper_object, 1);
	plan->compile_count = plan->step_count;
	size_t object_count = source_count + 1;

	size_t *all_compiles = arena_array(arena, plan->compile_count, sizeof(size_t));
	for (size_t i = 0; i < plan->compile_count; i++)
		all_compiles[i] = i;

	int library_count = multicore ? CORE_COUNT : 1;
	plan->artifacts = arena_array(arena, (size_t)library_count, sizeof(char *));
	plan->artifact_count = (size_t)library_count;
	for (int core = 0; core < library_count; core++) {
		char *base = multicore ? arena_printf(arena, "%s/%s_cpu%d", build_dir, name, core)
		                       : arena_printf(arena, "%s/%s", build_dir, name);
		char *library = arena_printf(arena, "%s.so", base);
		struct step *link = add_step(&builder, "LINK", library);
		struct strvec argv;
		strvec_init(&argv, arena);
		target_link_command(toolchain, library, objects, object_count, multicore ? core : -1, &argv);
		link->argv = argv.items;
		link->outputs = one(arena, library);
		link->output_count = 1;
		link->dependencies = all_compiles;
		link->dependency_count = plan->compile_count;
		link_inputs(arena, toolchain, link->argv, &plan->files[plan->step_count - 1]);
		size_t link_index = plan->step_count - 1;
		plan->artifacts[core] = library;
		if (!pack)
			continue;

		char *packed = arena_printf(arena, "%s.packed.so", base);
		char *stripped = arena_printf(arena, "%s.stripped.so", base);
		struct step *pack_step = add_step(&builder, "PACK", packed);
		strvec_init(&argv, arena);
		target_pack_command(toolchain, library, packed, stripped, &argv);
		pack_step->argv = argv.items;
		pack_step->outputs = arena_array(arena, 3, sizeof(char *));
		pack_step->outputs[0] = packed;
		pack_step->outputs[1] = stripped;
		pack_step->output_count = 2;
		pack_step->dependencies = arena_array(arena, 1, sizeof(size_t));
		pack_step->dependencies[0] = link_index;
		pack_step->dependency_count = 1;
		plan->files[plan->step_count - 1].inputs = one(arena, library);
		plan->files[plan->step_count - 1].input_count = 1;
		plan->artifacts[core] = packed;
	}
	return 0;
}
