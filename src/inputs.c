/* inputs.c - a build request's names, files and directories, checked
 * before anything is written. */
#include "inputs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "buildlog.h"
#include "codegen.h"
#include "diag.h"
#include "fsutil.h"

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* The extensions gcc and clang compile as C or C++. */
static const char *const source_extensions[] = {
	".c", ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C",
};

/* Library names the runtime keeps for itself. */
static const char *const reserved_library_names[] = { "builtin" };

/* A path that starts with '-' would be read as an option: "./-x.cpp". */
static const char *not_an_option(struct arena *arena, const char *path)
{
	return path[0] == '-' ? arena_printf(arena, "./%s", path) : path;
}

static int check_list(struct diag *diag, const char *what, const char *const *items, size_t count,
                      const char *empty_means)
{
	if (count && !items)
		return diag_fail(diag, BCO_ERROR_USAGE, "%s: %zu given but the list is NULL", what, count);
	for (size_t i = 0; i < count; i++) {
		if (!items[i])
			return diag_fail(diag, BCO_ERROR_USAGE, "%s: entry %zu is NULL", what, i + 1);
		if (empty_means && !*items[i])
			return diag_fail(diag, BCO_ERROR_INPUT, "%s: entry %zu is empty: %s", what, i + 1,
			                 empty_means);
	}
	return 0;
}

int inputs_check_lists(const struct bco_request *r, struct diag *diag)
{
	if (r->function_count && !r->functions)
		return diag_fail(diag, BCO_ERROR_USAGE, "function names: %zu given but the list is NULL",
		                 r->function_count);
	return check_list(diag, "schemas", r->schemas, r->schema_count, NULL) ||
	       check_list(diag, "sources", r->sources, r->source_count, NULL) ||
	       check_list(diag, "includes", r->includes, r->include_count,
	                  "an include directory cannot be empty (-I alone would take the next "
	                  "compiler argument as its directory)") ||
	       check_list(diag, "cflags", r->cflags, r->cflag_count,
	                  "the compiler would take an empty word for a file named ''") ||
	       check_list(diag, "ldflags", r->ldflags, r->ldflag_count,
	                  "the linker would take an empty word for a file named ''") ||
	       check_list(diag, "launcher", r->launcher, r->launcher_count, NULL) ? -1 : 0;
}

const char *inputs_library_name(struct arena *arena, const char *name, struct diag *diag)
{
	if (!name || !*name) {
		diag_fail(diag, BCO_ERROR_USAGE, "no library name: give one, such as 'relu'");
		return NULL;
	}
	for (const char *p = name; *p; p++) {
		if (*p == '/' || (unsigned char)*p < 0x20) {
			diag_fail(diag, BCO_ERROR_INPUT,
			          "library name '%s' must be a file name, without '/' or control characters",
			          name);
			return NULL;
		}
	}
	const char *dot = strrchr(name, '.');
	const char *first = name;
	while (*first == '.')
		first++;
	size_t length = dot && dot > first ? (size_t)(dot - name) : strlen(name);
	char *base = arena_strndup(arena, name, length);
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		diag_fail(diag, BCO_ERROR_INPUT, "library name '%s' is not a file name", name);
		return NULL;
	}
	if (length > LIBRARY_NAME_LIMIT) {
		diag_fail(diag, BCO_ERROR_INPUT,
		          "library name is %zu characters long; at most %d are allowed, so that every "
		          "file named after it (such as NAME_cpu7.stripped.so) fits in a file name",
		          length, LIBRARY_NAME_LIMIT);
		return NULL;
	}
	for (size_t i = 0; i < COUNT(reserved_library_names); i++) {
		if (strcmp(base, reserved_library_names[i]) == 0) {
			diag_fail(diag, BCO_ERROR_INPUT,
			          "library name '%s' is reserved by the Neuron runtime; choose another name",
			          name);
			return NULL;
		}
	}
	return base;
}

static int has_source_extension(const char *path)
{
	const char *base = fs_basename(path);
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return 0;
	for (size_t i = 0; i < COUNT(source_extensions); i++)
		if (strcmp(dot, source_extensions[i]) == 0)
			return 1;
	return 0;
}

static int check_source(const char *source, struct diag *diag)
{
	struct stat st;
	if (!*source)
		return diag_fail(diag, BCO_ERROR_INPUT, "a source path is empty");
	if (stat(source, &st) != 0 || access(source, R_OK) != 0)
		return diag_fail(diag, BCO_ERROR_INPUT, "cannot read source %s: %s", source,
		                 strerror(errno));
	if (S_ISDIR(st.st_mode))
		return diag_fail(diag, BCO_ERROR_INPUT, "source %s is a directory, not a C or C++ file",
		                 source);
	if (!S_ISREG(st.st_mode))
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "source %s is not a regular file (a device, FIFO or socket); give the "
		                 "kernel's C or C++ file", source);
	if (!has_source_extension(source))
		return diag_fail(diag, BCO_ERROR_INPUT,
		                 "source %s has no C or C++ extension (.c, .cc, .cp, .cxx, .cpp, .CPP, "
		                 ".c++ or .C), which tells the compiler its language; rename it",
		                 source);
	return 0;
}

int inputs_sources(struct arena *arena, const struct bco_request *request,
                   const char *const **sources, struct diag *diag)
{
	if (request->source_count == 0)
		return diag_fail(diag, BCO_ERROR_USAGE,
		                 "no kernel sources: give the C++ files that define the ops");
	const char **checked = arena_array(arena, request->source_count, sizeof *checked);
	for (size_t i = 0; i < request->source_count; i++) {
		if (check_source(request->sources[i], diag) != 0)
			return -1;
		checked[i] = not_an_option(arena, request->sources[i]);
	}
	*sources = checked;
	return 0;
}

const char *inputs_build_dir(struct arena *arena, const char *build_dir, struct diag *diag)
{
	if (!build_dir)
		return "build";
	if (!*build_dir) {
		diag_fail(diag, BCO_ERROR_INPUT,
		          "the build directory is empty: name one, such as 'build' (or '.' for this one)");
		return NULL;
	}
	return not_an_option(arena, build_dir);
}

static const char *log_path(struct arena *arena, const char *build_dir)
{
	return arena_printf(arena, "%s/.build-custom-op.log", build_dir);
}

static const char *compile_commands_path(struct arena *arena, const char *build_dir)
{
	return arena_printf(arena, "%s/compile_commands.json", build_dir);
}

/* wrapper.cpp is the build's when it begins with the banner of generated code. */
static int check_wrapper(struct arena *arena, const char *build_dir, struct diag *diag)
{
	const char *path = arena_printf(arena, "%s/wrapper.cpp", build_dir);
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	char *text = NULL;
	size_t length = 0;
	size_t banner_length = strlen(CODEGEN_BANNER);
	if (S_ISREG(st.st_mode) && fs_read_file(arena, path, &text, &length) == 0 &&
	    length >= banner_length && memcmp(text, CODEGEN_BANNER, banner_length) == 0)
		return 0;
	return diag_fail(diag, BCO_ERROR_INPUT,
	                 "%s was not generated by build-custom-op (%s), and the build would "
	                 "overwrite it; move it away, or build in another directory (-B DIR)",
	                 path, S_ISREG(st.st_mode) ? "it does not begin with the line "
	                                             "'// WARNING: AUTO GENERATED DO NOT EDIT'"
	                                           : "it is not a regular file");
}

/* A compile_commands.json laid out as compdb.c writes it, for objects in
 * this build directory: one a build made before its log listed it (an older
 * build-custom-op, or a log lost or corrupted since). */
static int looks_like_ours(struct arena *arena, const char *path, const char *build_dir)
{
	char *text = NULL;
	size_t length = 0;
	static const char start[] = "[\n  {\n    \"directory\": ";
	if (fs_read_file(arena, path, &text, &length) != 0 || strncmp(text, start, strlen(start)) != 0)
		return 0;
	return strstr(text, arena_printf(arena, ",\n    \"output\": \"%s/", build_dir)) != NULL;
}

int inputs_check_users_files(struct arena *arena, const char *build_dir, struct diag *diag)
{
	if (check_wrapper(arena, build_dir, diag) != 0)
		return -1;
	const char *compile_commands = compile_commands_path(arena, build_dir);
	struct stat st;
	if (lstat(compile_commands, &st) != 0)
		return 0;
	struct buildlog log;
	buildlog_load(arena, log_path(arena, build_dir), build_dir, &log);
	if (S_ISREG(st.st_mode) && (buildlog_find(&log, "compile_commands.json") ||
	                            looks_like_ours(arena, compile_commands, build_dir)))
		return 0;
	return diag_fail(diag, BCO_ERROR_INPUT,
	                 "%s was not made by build-custom-op (the build log of %s does not list "
	                 "it), and the build would overwrite it; move it away, or build in another "
	                 "directory (-B DIR)", compile_commands, build_dir);
}

int inputs_claim_compile_commands(struct arena *arena, const char *build_dir, struct diag *diag)
{
	const char *path = log_path(arena, build_dir);
	struct buildlog log;
	buildlog_load(arena, path, build_dir, &log);
	const struct buildlog_entry *entry = buildlog_find(&log, "compile_commands.json");
	if (entry && entry->has_inputs)
		return 0;
	/* No library: it is every build's (only objects and libraries are ever
	 * removed as another build's leftovers). */
	buildlog_record(&log, "compile_commands.json", "", 0, 0);
	return buildlog_save(&log, path, diag);
}
