/* state.c - which steps of a plan are up to date. */
#include "state.h"

#include <string.h>

#include "arena.h"
#include "buffer.h"
#include "buildlog.h"
#include "depfile.h"
#include "fsutil.h"
#include "plan.h"
#include "target.h"

uint64_t state_command_hash(const struct plan *plan, size_t index, const struct toolchain *toolchain)
{
	const char *extra[3];
	size_t count = target_command_environment(toolchain, extra);
	return buildlog_hash_command(plan->steps[index].argv, extra, count);
}

/* The oldest output's mtime in *oldest; 0 when every output exists. */
static int oldest_output(const struct step *step, struct timespec *oldest)
{
	for (size_t i = 0; i < step->output_count; i++) {
		struct timespec mtime;
		if (fs_mtime(step->outputs[i], &mtime) != 0)
			return -1;
		if (i == 0 || fs_time_compare(mtime, *oldest) < 0)
			*oldest = mtime;
	}
	return 0;
}

/* Returns 1 when every file in files exists and none is newer than limit. */
static int none_newer(char *const *files, size_t count, struct timespec limit)
{
	for (size_t i = 0; i < count; i++) {
		struct timespec mtime;
		if (fs_mtime(files[i], &mtime) != 0 || fs_time_compare(mtime, limit) > 0)
			return 0;
	}
	return 1;
}

static int step_is_up_to_date(struct arena *arena, const struct plan *plan, size_t index,
                              const struct buildlog *log, const struct toolchain *toolchain)
{
	const struct step *step = &plan->steps[index];
	const struct step_files *files = &plan->files[index];
	for (size_t i = 0; i < step->dependency_count; i++)
		if (plan->steps[step->dependencies[i]].state != STEP_UP_TO_DATE)
			return 0;
	/* Zero: a step without outputs would be older than any input, so it runs. */
	struct timespec oldest = {0, 0};
	if (oldest_output(step, &oldest) != 0)
		return 0;
	for (size_t i = 0; i < step->output_count; i++) {
		uint64_t recorded;
		if (!buildlog_lookup(log, step->outputs[i], &recorded) ||
		    recorded != state_command_hash(plan, index, toolchain))
			return 0;
	}
	if (!none_newer(files->inputs, files->input_count, oldest))
		return 0;
	if (!files->depfile)
		return 1;
	/* A compile whose depfile is missing or unreadable is rebuilt: it may
	 * have read any header. */
	char *text;
	size_t length;
	struct strvec headers;
	strvec_init(&headers, arena);
	if (fs_read_file(arena, files->depfile, &text, &length) != 0 ||
	    depfile_parse(arena, text, length, &headers) != 0)
		return 0;
	return none_newer(headers.items, headers.length, oldest);
}

size_t state_mark_up_to_date(struct arena *arena, struct plan *plan, const struct buildlog *log,
                             const struct toolchain *toolchain)
{
	size_t to_run = 0;
	/* Dependencies come before their dependents in a plan, so one pass sees
	 * each dependency's verdict before it is needed. */
	for (size_t i = 0; i < plan->step_count; i++) {
		if (step_is_up_to_date(arena, plan, i, log, toolchain)) {
			plan->steps[i].state = STEP_UP_TO_DATE;
		} else {
			plan->steps[i].state = STEP_PENDING;
			to_run++;
		}
	}
	return to_run;
}
