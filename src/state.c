/* state.c - which steps of a plan are up to date, and what a finished one
 * may record. */
#define _DEFAULT_SOURCE /* DT_DIR: skip a stat for each subdirectory of a linker spec */
#include "state.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "buildlog.h"
#include "depfile.h"
#include "fsutil.h"
#include "plan.h"
#include "target.h"

/* How deep a directory input is followed (a linker spec holds ldscripts/). */
#define DIRECTORY_DEPTH 4

void state_init(struct state *state, struct arena *arena, struct plan *plan, struct buildlog *log,
                const struct toolchain *toolchain, const char *library, int clock_fd)
{
	memset(state, 0, sizeof *state);
	state->arena = arena;
	state->plan = plan;
	state->log = log;
	state->toolchain = toolchain;
	state->library = library;
	state->clock_fd = clock_fd;
	strvec_init(&state->future, arena);
}

uint64_t state_command_hash(const struct plan *plan, size_t index, const struct toolchain *toolchain)
{
	const char *extra[3];
	size_t count = target_command_environment(toolchain, extra);
	return buildlog_hash_command(plan->steps[index].argv, extra, count);
}

struct timespec state_file_system_now(const struct state *state)
{
	struct timespec now;
	if (state->clock_fd < 0 || fs_touch_now(state->clock_fd, &now) != 0)
		clock_gettime(CLOCK_REALTIME, &now);
	return now;
}

/* What fingerprinting a list of inputs saw. */
struct scan {
	uint64_t hash;
	int missing;               /* an input could not be read: the step must run */
	struct timespec now;       /* inputs dated after it are in the future */
	/* When set, inputs not in *known (sorted) dated after *since changed
	 * while the step ran. */
	const struct strvec *known;
	const struct timespec *since;
	int since_inclusive;       /* an input dated at *since, known or not, changed too */
	int unsettled;
};

static void note_future(struct state *state, const char *path, struct timespec mtime)
{
	if (strvec_contains(&state->future, path))
		return;
	if (state->future.length == 0)
		state->first_future_time = mtime;
	strvec_push_copy(&state->future, path);
}

static void scan_path(struct state *state, struct scan *scan, const char *path, int depth);

/* Where what the check looks at is noted (fs_watch), or NULL. */
static struct strvec *watched(const struct state *state)
{
	return state->toolchain ? state->toolchain->watched : NULL;
}

/* Whether the header at path, dated mtime, changed after *scan->since. */
static int changed_since(const struct scan *scan, const char *path, struct timespec mtime)
{
	int order = fs_time_compare(mtime, *scan->since);
	if (order == 0)
		return scan->since_inclusive;
	return order > 0 &&
	       !strvec_sorted_contains(scan->known, path);
}

/* A directory stands for the files in it, in name order. */
static void scan_directory(struct state *state, struct scan *scan, const char *path, int depth)
{
	DIR *directory = opendir(path);
	if (!directory) {
		scan->missing = 1;
		return;
	}
	struct strvec names;
	strvec_init(&names, state->arena);
	for (struct dirent *entry; (entry = readdir(directory));)
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			strvec_push_copy(&names, entry->d_name);
	closedir(directory);
	strvec_sort(&names);
	scan->hash = buildlog_hash_number(scan->hash, names.length);
	for (size_t i = 0; i < names.length; i++)
		scan_path(state, scan, arena_printf(state->arena, "%s/%s", path, names.items[i]), depth + 1);
}

static void scan_path(struct state *state, struct scan *scan, const char *path, int depth)
{
	struct stat st;
	int missing = stat(path, &st) != 0;
	fs_watch(watched(state), path, missing);
	if (missing) {
		scan->missing = 1;
		return;
	}
	scan->hash = buildlog_hash_field(scan->hash, path);
	if (S_ISDIR(st.st_mode)) {
		if (depth < DIRECTORY_DEPTH)
			scan_directory(state, scan, path, depth);
		return;
	}
	scan->hash = buildlog_hash_number(scan->hash, (uint64_t)st.st_mtim.tv_sec);
	scan->hash = buildlog_hash_number(scan->hash, (uint64_t)st.st_mtim.tv_nsec);
	scan->hash = buildlog_hash_number(scan->hash, (uint64_t)st.st_size);
	if (fs_time_compare(st.st_mtim, scan->now) > 0)
		note_future(state, path, st.st_mtim);
	else if (scan->since && changed_since(scan, path, st.st_mtim))
		scan->unsettled = 1;
}

/* Fingerprints the plan's inputs of step index, then headers. */
static void scan_step(struct state *state, struct scan *scan, size_t index, char *const *headers,
                      size_t header_count)
{
	const struct step_files *files = &state->plan->files[index];
	/* The plan's inputs were all there when the step started: only a
	 * header can be new. */
	const struct timespec *since = scan->since;
	scan->since = NULL;
	scan->hash = buildlog_hash_start();
	for (size_t i = 0; i < files->input_count; i++)
		scan_path(state, scan, files->inputs[i], 0);
	scan->since = since;
	scan->hash = buildlog_hash_number(scan->hash, header_count);
	for (size_t i = 0; i < header_count; i++)
		scan_path(state, scan, headers[i], 0);
}

/* The headers the depfile names now; returns 0, or -1 when it is missing or
 * unreadable (the compile may have read any header). */
static int read_headers(struct state *state, size_t index, struct strvec *headers)
{
	const struct step_files *files = &state->plan->files[index];
	strvec_init(headers, state->arena);
	if (!files->depfile)
		return 0;
	fs_watch(watched(state), files->depfile, 1);
	char *text;
	size_t length;
	if (fs_read_file(state->arena, files->depfile, &text, &length) != 0)
		return -1;
	return depfile_parse(state->arena, text, length, headers);
}

/* The headers of step index as they were before it ran (once). */
static int known_headers(struct state *state, size_t index)
{
	struct step_files *files = &state->plan->files[index];
	if (!files->headers_read) {
		struct strvec headers;
		if (read_headers(state, index, &headers) != 0)
			return -1;
		files->headers = headers.items;
		files->header_count = headers.length;
		files->headers_read = 1;
	}
	return 0;
}

/* The oldest output's mtime in *oldest; 0 when every output exists. */
static int oldest_output(const struct state *state, const struct step *step, struct timespec *oldest)
{
	for (size_t i = 0; i < step->output_count; i++) {
		struct timespec mtime;
		fs_watch(watched(state), step->outputs[i], 1);
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

static int step_is_up_to_date(struct state *state, size_t index, struct timespec now)
{
	const struct plan *plan = state->plan;
	const struct step *step = &plan->steps[index];
	const struct step_files *files = &plan->files[index];
	for (size_t i = 0; i < step->dependency_count; i++)
		if (plan->steps[step->dependencies[i]].state != STEP_UP_TO_DATE)
			return 0;
	if (files->changed)
		return 0;
	/* Zero: a step without outputs would be older than any input, so it runs. */
	struct timespec oldest = {0, 0};
	if (oldest_output(state, step, &oldest) != 0)
		return 0;
	uint64_t command = state_command_hash(plan, index, state->toolchain);
	int unversioned = 0;
	for (size_t i = 0; i < step->output_count; i++) {
		const struct buildlog_entry *entry = buildlog_find(state->log, plan_output_name(plan, step->outputs[i]));
		if (!entry || entry->command_hash != command)
			return 0;
		unversioned |= !entry->has_inputs;
	}
	if (known_headers(state, index) != 0)
		return 0;
	struct scan scan = { .now = now };
	scan_step(state, &scan, index, files->headers, files->header_count);
	if (scan.missing)
		return 0;
	if (unversioned) {
		/* As version 1 decided; from now on the fingerprint decides. */
		if (!none_newer(files->inputs, files->input_count, oldest) ||
		    !none_newer(files->headers, files->header_count, oldest))
			return 0;
		for (size_t i = 0; i < step->output_count; i++)
			buildlog_record(state->log, plan_output_name(plan, step->outputs[i]), state->library,
			                command, scan.hash);
		state->log_changed = 1;
		return 1;
	}
	for (size_t i = 0; i < step->output_count; i++)
		if (buildlog_find(state->log, plan_output_name(plan, step->outputs[i]))->inputs_hash != scan.hash)
			return 0;
	return 1;
}

size_t state_mark_up_to_date(struct state *state)
{
	struct plan *plan = state->plan;
	struct timespec now = state_file_system_now(state);
	size_t to_run = 0;
	/* Dependencies come before their dependents in a plan, so one pass sees
	 * each dependency's verdict before it is needed. */
	for (size_t i = 0; i < plan->step_count; i++) {
		if (step_is_up_to_date(state, i, now)) {
			plan->steps[i].state = STEP_UP_TO_DATE;
		} else {
			plan->steps[i].state = STEP_PENDING;
			to_run++;
		}
	}
	return to_run;
}

/* How long a step's spawn waits for the file system's clock to move past
 * its start: a few ticks of a kernel's coarse clock. */
#define CLOCK_WAIT_NS 20000000L
#define CLOCK_POLL_NS 250000L

/* Returns 1 once the file system's time is after since, or 0 when it is not
 * within CLOCK_WAIT_NS (or cannot be read). */
static int clock_moved_past(const struct state *state, struct timespec since)
{
	if (state->clock_fd < 0)
		return 0;
	for (long waited = 0;; waited += CLOCK_POLL_NS) {
		struct timespec now;
		if (fs_touch_now(state->clock_fd, &now) != 0)
			return 0;
		if (fs_time_compare(now, since) > 0)
			return 1;
		if (waited >= CLOCK_WAIT_NS)
			return 0;
		nanosleep(&(struct timespec){0, CLOCK_POLL_NS}, NULL);
	}
}

void state_step_starting(struct state *state, size_t index)
{
	struct step_files *files = &state->plan->files[index];
	files->before_valid = 0;
	files->started = state_file_system_now(state);
	if (known_headers(state, index) != 0) {
		/* No depfile yet: the compile has never run here. */
		files->headers = NULL;
		files->header_count = 0;
		files->headers_read = 1;
	}
	struct scan scan = { .now = files->started };
	scan_step(state, &scan, index, files->headers, files->header_count);
	files->before_hash = scan.hash;
	files->before_valid = !scan.missing;
	/* Whatever the step writes or a user edits from its spawn on is then
	 * dated after files->started. */
	files->started_inclusive = !clock_moved_past(state, files->started);
}

int state_step_finished(struct state *state, size_t index, uint64_t *inputs_hash)
{
	struct step_files *files = &state->plan->files[index];
	if (!files->before_valid)
		return 0;
	struct timespec now = state_file_system_now(state);
	struct scan after = { .now = now };
	scan_step(state, &after, index, files->headers, files->header_count);
	if (after.missing || after.hash != files->before_hash)
		return 0;
	struct strvec headers, known;
	if (read_headers(state, index, &headers) != 0)
		return 0;
	strvec_init(&known, state->arena);
	strvec_extend(&known, files->headers, files->header_count);
	strvec_sort(&known);
	struct scan record = { .now = now, .known = &known, .since = &files->started,
	                       .since_inclusive = files->started_inclusive };
	scan_step(state, &record, index, headers.items, headers.length);
	if (record.missing || record.unsettled)
		return 0;
	*inputs_hash = record.hash;
	return 1;
}
