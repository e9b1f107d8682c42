/* target.c - what differs between the device (xtensa) and the host target. */
#define _GNU_SOURCE /* dladdr: where the library itself lives, to find the host SDK */
#include "target.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "fsutil.h"
#include "sanitize.h"

extern char **environ;

static const char default_sdk[] = "/opt/aws/neuron/gpsimd/custom_op";
static const char default_core[] = "ncore2gp";
static const char default_license[] = "/opt/aws/neuron/gpsimd/tools/licenses/amzn_vq7_us_582883.out";
static const char vendor_bin[] = "/opt/aws/neuron/gpsimd/bin";
static const char tools_package[] = "aws-neuronx-gpsimd-tools";

/* The spec's CC_OPT and LINK_OPT, before --xtensa-core and --xtensa-system. */
static const char *const xtensa_common_flags[] = {
	"-g", "-std=c++14", "-stdlib=libc++-e", "-fno-jump-tables", "-Os", "-Wall", "-Werror",
	"-Wno-c99-designator", "-mcoproc",
};
static const char *const xtensa_compile_only_flags[] = { "-MMD", "-MP", "-fpic", "-mlongcalls", "-c" };
/* The device compiles kernels with clang, C++14, -Wall -Werror; the host
 * does too, so a kernel the device refuses for a warning is refused here.
 * The depfile is named (-MF, between these two lists), so that it lands
 * beside the object also when a launcher (distcc, sccache) runs the
 * preprocessor without the -o the compiler would name it after.
 * -fstack-clash-protection makes a big frame touch each page on its way
 * down, so any overflow of a core stack faults in that stack's guard. */
static const char *const host_compile_flags[] = {
	"-std=c++14", "-fPIC", "-O2", "-g", "-MMD", "-MP",
};
static const char *const host_checking_flags[] = {
	"-Wall", "-Werror", "-fstack-clash-protection",
};
/* Warnings that exist only because the host is 64-bit and the device
 * 32-bit stay warnings; target_explain_output says why when one shows.
 * gcc and clang name some of them differently. */
static const char *const host_any_compiler_flags[] = {
	"-Wno-error=format", "-Wno-error=int-to-pointer-cast", "-Wno-error=narrowing",
};
static const char *const host_clang_flags[] = {
	"-Wno-error=constant-conversion", "-Wno-c99-designator",
};
static const char *const host_gcc_flags[] = {
	"-Wno-error=overflow", "-Wno-error=sign-compare",
};

/* What a warning that only a 64-bit host gives is, and why it stays one. */
struct host_only_warning {
	const char *flag;   /* as the compiler names it in its message, "-Wformat" */
	const char *reason;
};
static const struct host_only_warning host_only_warnings[] = {
	{ "-Wformat", "size_t, ptrdiff_t and long are 32 bits there and int64_t is long long, so a format "
	              "that is right on the device (%d or %u for a size_t, %lld for an int64_t) is wrong "
	              "here, and the other way round" },
	{ "-Wint-to-pointer-cast", "pointers are 32 bits there, so a 32-bit integer becomes a pointer "
	                           "without loss" },
	{ "-Wint-to-void-pointer-cast", "pointers are 32 bits there, so a 32-bit integer becomes a pointer "
	                                "without loss" },
	{ "-Wnarrowing", "size_t and long are 32 bits there, so converting them to a 32-bit type in braces "
	                 "does not narrow" },
	{ "-Wc++11-narrowing", "size_t and long are 32 bits there, so converting them to a 32-bit type in "
	                       "braces does not narrow" },
	{ "-Woverflow", "size_t and unsigned long are 32 bits there, so a constant of those types (~0UL, "
	                "(size_t)-1) fits a 32-bit type" },
	{ "-Wconstant-conversion", "size_t and unsigned long are 32 bits there, so a constant of those types "
	                           "(~0UL, (size_t)-1) fits a 32-bit type" },
	{ "-Wsign-compare", "the device's clang does not give it with -Wall, and int64_t against size_t is "
	                    "signed against unsigned only here" },
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

const char *target_stack_switch_tail(enum bco_target target)
{
	if (target == BCO_TARGET_HOST)
		return "    if (switched_stack)\n        switchBack();\n";
	return "    if (switched_stack)\n        asm(\"j switchBack\");\n";
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *value = getenv(name);
	return value && *value ? value : fallback;
}

static void push_all(struct strvec *argv, const char *const *words, size_t count)
{
	for (size_t i = 0; i < count; i++)
		strvec_push(argv, (char *)words[i]);
}

/* Splits text at blanks into words (no quoting: $CXX is a command, not a script). */
static char **split_words(struct arena *arena, const char *text, size_t *count)
{
	struct strvec words;
	strvec_init(&words, arena);
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (p > start)
			strvec_push(&words, arena_strndup(arena, start, (size_t)(p - start)));
	}
	*count = words.length;
	return words.items;
}

/* Whether tool at path is executable, noted in *watched either way. */
static int is_executable(struct strvec *watched, const char *path)
{
	int found = access(path, X_OK) == 0;
	fs_watch(watched, path, !found);
	return found;
}

/* Finds tool on PATH; returns its path, or NULL. */
static const char *on_path(struct arena *arena, const char *tool, struct strvec *watched)
{
	const char *path = getenv("PATH");
	if (strchr(tool, '/'))
		return is_executable(watched, tool) ? tool : NULL;
	if (!path)
		return NULL;
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t length = end ? (size_t)(end - p) : strlen(p);
		char *candidate = length ? arena_printf(arena, "%.*s/%s", (int)length, p, tool)
		                         : arena_printf(arena, "./%s", tool);
		if (is_executable(watched, candidate))
			return candidate;
		if (!end)
			return NULL;
		p = end;
	}
}

/* Resolves an xtensa tool: its bare name when it is on PATH (so commands
 * read as the spec writes them), else its path in the vendor directories. */
static const char *find_xtensa_tool(struct arena *arena, const char *tool,
                                    const char **location, struct diag *diag)
{
	if ((*location = on_path(arena, tool, NULL)))
		return tool;
	const char *xtensa_tools = getenv("XTENSA_TOOLS");
	struct buffer looked;
	buffer_init(&looked, arena);
	buffer_puts(&looked, "PATH");
	if (xtensa_tools && *xtensa_tools) {
		char *candidate = arena_printf(arena, "%s/XtensaTools/bin/%s", xtensa_tools, tool);
		if (access(candidate, X_OK) == 0)
			return *location = candidate;
		buffer_printf(&looked, ", %s/XtensaTools/bin", xtensa_tools);
	} else {
		buffer_puts(&looked, ", $XTENSA_TOOLS/XtensaTools/bin (XTENSA_TOOLS is not set)");
	}
	char *candidate = arena_printf(arena, "%s/%s", vendor_bin, tool);
	if (access(candidate, X_OK) == 0)
		return *location = candidate;
	buffer_printf(&looked, " and %s", vendor_bin);
	diag_fail(diag, BCO_ERROR_TOOL,
	          "cannot find %s: looked in %s.\n"
	          "Install the package %s, or set XTENSA_TOOLS to the directory that holds "
	          "XtensaTools/bin, or add that directory to PATH.",
	          tool, looked.data, tools_package);
	return NULL;
}

static int is_directory(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The host SDK when the request names none: beside the library or the
 * program, as in the source tree (./sdk/host) or an install
 * (<prefix>/lib/build-custom-op/sdk/host). */
static const char *find_host_sdk(struct arena *arena, struct strvec *watched)
{
	const char *from_environment = getenv("BUILD_CUSTOM_OP_HOST_SDK");
	if (from_environment && *from_environment)
		return from_environment;
	char *anchors[2] = { NULL, NULL };
	Dl_info info;
	if (dladdr(default_sdk, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
		anchors[0] = arena_strdup(arena, info.dli_fname);
	char executable[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
	if (length > 0)
		anchors[1] = arena_strndup(arena, executable, (size_t)length);
	static const char *const layouts[] = {
		"%s/sdk/host", "%s/build-custom-op/sdk/host", "%s/../lib/build-custom-op/sdk/host",
	};
	for (size_t a = 0; a < COUNT(anchors); a++) {
		if (!anchors[a])
			continue;
		char *slash = strrchr(anchors[a], '/');
		*slash = '\0';
		const char *directory = *anchors[a] ? anchors[a] : "/";
		for (size_t l = 0; l < COUNT(layouts); l++) {
			char *candidate = arena_printf(arena, layouts[l], directory);
			char *marker = arena_printf(arena, "%s/include/neuron/wrapper_api.h", candidate);
			int exists = fs_exists(marker);
			fs_watch(watched, marker, !exists);
			if (exists) {
				char resolved[PATH_MAX];
				return realpath(candidate, resolved) ? arena_strdup(arena, resolved) : candidate;
			}
		}
	}
	return NULL;
}

/* clang or gcc, from the names of the compiler's words as found on PATH
 * and with links resolved (c++ is often a link to either). */
static enum host_compiler host_compiler_family(struct arena *arena, const struct toolchain *toolchain)
{
	enum host_compiler family = HOST_COMPILER_OTHER;
	for (size_t i = 0; i < toolchain->compiler_words; i++) {
		const char *word = toolchain->compiler[i];
		const char *found = on_path(arena, word, toolchain->watched);
		char resolved[PATH_MAX];
		const char *names[2] = { word, found && realpath(found, resolved) ? resolved : NULL };
		for (size_t n = 0; n < 2; n++) {
			if (!names[n])
				continue;
			const char *slash = strrchr(names[n], '/');
			const char *base = slash ? slash + 1 : names[n];
			if (strstr(base, "clang"))
				return HOST_COMPILER_CLANG;
			if (strstr(base, "g++") || strstr(base, "gcc"))
				family = HOST_COMPILER_GCC;
		}
	}
	return family;
}

/* Checks that the SDK holds the files the build needs. */
static int check_sdk(struct arena *arena, const struct toolchain *toolchain, struct diag *diag)
{
	static const char *const xtensa_files[] = {
		"neuron/wrapper_api.h", "neuron/libneuroncustomop.a", "neuron/libcweak.a",
		"c10/lib/libc10.a", "lsp_fll_load_cpus/lsp_fll_load_cpu_single",
	};
	static const char *const host_files[] = {
		"include/neuron/wrapper_api.h", "lib/libcustomop_host.a", "lib/core_single.o",
		"lib/core_cpu0.o",
	};
	int host = toolchain->target == BCO_TARGET_HOST;
	const char *const *files = host ? host_files : xtensa_files;
	size_t count = host ? COUNT(host_files) : COUNT(xtensa_files);
	const char *const *sanitized = sanitize_sdk_files(toolchain->sanitizers);
	fs_watch(toolchain->watched, toolchain->sdk, 1);
	if (!is_directory(toolchain->sdk))
		return diag_fail(diag, BCO_ERROR_TOOL,
		                 host ? "the host SDK directory %s does not exist; pass --sdk DIR"
		                      : "the Neuron custom-op SDK directory %s does not exist; "
		                        "set NEURON_CUSTOM_OP or pass --sdk DIR (the package "
		                        "aws-neuronx-gpsimd-customop-lib installs it)",
		                 toolchain->sdk);
	for (size_t i = 0; i < count; i++) {
		char *path = arena_printf(arena, "%s/%s", toolchain->sdk, files[i]);
		fs_watch(toolchain->watched, path, 1);
		if (!fs_exists(path))
			return diag_fail(diag, BCO_ERROR_TOOL,
			                 host ? "the host SDK at %s is incomplete: %s is missing; run "
			                        "'make' in the build-custom-op source tree, or pass --sdk DIR"
			                      : "the Neuron custom-op SDK at %s is incomplete: %s is "
			                        "missing; set NEURON_CUSTOM_OP or pass --sdk DIR",
			                 toolchain->sdk, path);
	}
	for (size_t i = 0; sanitized[i]; i++) {
		char *path = arena_printf(arena, "%s/%s", toolchain->sdk, sanitized[i]);
		if (!fs_exists(path))
			return diag_fail(diag, BCO_ERROR_TOOL,
			                 "the host SDK at %s has no sanitized runtime: %s is missing; run "
			                 "'make' in the build-custom-op source tree (it builds the sanitized "
			                 "variant beside the plain one), or pass --sdk DIR", toolchain->sdk, path);
	}
	return 0;
}

/* envp for the steps: ours, plus LM_LICENSE_FILE for the xtensa tools. */
static char **step_environment(struct arena *arena, const struct toolchain *toolchain)
{
	struct strvec environment;
	strvec_init(&environment, arena);
	for (char **variable = environ; variable && *variable; variable++)
		strvec_push(&environment, *variable);
	if (toolchain->target == BCO_TARGET_XTENSA && !getenv("LM_LICENSE_FILE"))
		strvec_push(&environment, arena_printf(arena, "LM_LICENSE_FILE=%s", toolchain->license));
	return environment.items;
}

int target_resolve(struct arena *arena, const struct bco_request *request, int check_files,
                   struct toolchain *toolchain, struct diag *diag)
{
	memset(toolchain, 0, sizeof *toolchain);
	toolchain->target = request->target;
	toolchain->watched = arena_alloc(arena, sizeof *toolchain->watched);
	strvec_init(toolchain->watched, arena);
	if (request->target != BCO_TARGET_XTENSA && request->target != BCO_TARGET_HOST)
		return diag_fail(diag, BCO_ERROR_USAGE, "unknown target %d", (int)request->target);

	struct strvec words;
	strvec_init(&words, arena);
	for (size_t i = 0; i < request->include_count; i++) {
		const char *include = request->includes[i];
		strvec_push(&words, include[0] == '-' ? (char *)include : arena_printf(arena, "-I%s", include));
	}
	toolchain->includes = words.items;
	toolchain->include_count = words.length;
	toolchain->cflags = (char **)request->cflags;
	toolchain->cflag_count = request->cflag_count;
	toolchain->launcher = (char **)request->launcher;
	toolchain->launcher_count = request->launcher_count;
	toolchain->ldflags = (char **)request->ldflags;
	toolchain->ldflag_count = request->ldflag_count;
	if (sanitize_parse(request->sanitize, request->target, &toolchain->sanitizers, diag) != 0)
		return -1;

	if (request->target == BCO_TARGET_HOST) {
		toolchain->sdk = request->sdk ? request->sdk : find_host_sdk(arena, toolchain->watched);
		if (!toolchain->sdk)
			return diag_fail(diag, BCO_ERROR_TOOL,
			                 "cannot find the host SDK next to build-custom-op; run 'make' in "
			                 "its source tree, set BUILD_CUSTOM_OP_HOST_SDK, or pass --sdk DIR");
		/* The device's compiler is clang-based: prefer clang++. */
		const char *cxx = getenv("CXX");
		if (!cxx || !*cxx)
			cxx = on_path(arena, "clang++", toolchain->watched) ? "clang++" : "c++";
		toolchain->compiler = split_words(arena, cxx, &toolchain->compiler_words);
		if (toolchain->compiler_words == 0)
			toolchain->compiler = split_words(arena, "c++", &toolchain->compiler_words);
		toolchain->compiler_location = on_path(arena, toolchain->compiler[0], toolchain->watched);
		if (check_files && !toolchain->compiler_location)
			return diag_fail(diag, BCO_ERROR_TOOL,
			                 "cannot find the host C++ compiler '%s' on PATH; install clang or "
			                 "g++, or set CXX", toolchain->compiler[0]);
		toolchain->host_compiler = host_compiler_family(arena, toolchain);
	} else {
		toolchain->sdk = request->sdk ? request->sdk : env_or("NEURON_CUSTOM_OP", default_sdk);
		toolchain->core = request->core ? request->core : env_or("Q7_CORE", default_core);
		toolchain->xtensa_system = request->xtensa_system ? request->xtensa_system
		                           : env_or("Q7_TOOLS", arena_printf(arena,
		                                    "/opt/aws/neuron/gpsimd/tools/%s/config", toolchain->core));
		toolchain->license = env_or("LM_LICENSE_FILE", default_license);
		/* A dry run shows the tools it would use, or their names when they are missing. */
		const char *compiler = find_xtensa_tool(arena, "xt-clang++", &toolchain->compiler_location, diag);
		if (!compiler && check_files)
			return -1;
		toolchain->packer = find_xtensa_tool(arena, "xt-pkg-loadlib", &toolchain->packer_location, diag);
		if (!toolchain->packer && check_files)
			return -1;
		compiler = compiler ? compiler : "xt-clang++";
		toolchain->packer = toolchain->packer ? toolchain->packer : "xt-pkg-loadlib";
		toolchain->compiler = arena_array(arena, 2, sizeof(char *));
		toolchain->compiler[0] = (char *)compiler;
		toolchain->compiler_words = 1;
	}
	if (check_files && check_sdk(arena, toolchain, diag) != 0)
		return -1;
	toolchain->environment = step_environment(arena, toolchain);
	/* A dry run without the compiler shows the link without the runtime's
	 * directory. */
	if (toolchain->compiler_location && sanitize_find_runtime(arena, toolchain, diag) != 0)
		return -1;
	return 0;
}

void target_compile_command(const struct toolchain *toolchain, const char *source,
                            const char *object, int is_wrapper, struct strvec *argv)
{
	struct arena *arena = argv->arena;
	strvec_extend(argv, toolchain->launcher, toolchain->launcher_count);
	strvec_extend(argv, toolchain->compiler, toolchain->compiler_words);
	if (toolchain->target == BCO_TARGET_HOST) {
		push_all(argv, host_compile_flags, COUNT(host_compile_flags));
		strvec_push(argv, "-MF");
		strvec_push(argv, arena_printf(arena, "%.*s.d", (int)(strlen(object) - 2), object));
		push_all(argv, host_checking_flags, COUNT(host_checking_flags));
		push_all(argv, host_any_compiler_flags, COUNT(host_any_compiler_flags));
		if (toolchain->host_compiler == HOST_COMPILER_CLANG)
			push_all(argv, host_clang_flags, COUNT(host_clang_flags));
		else if (toolchain->host_compiler == HOST_COMPILER_GCC)
			push_all(argv, host_gcc_flags, COUNT(host_gcc_flags));
		sanitize_compile_flags(toolchain, argv);
		strvec_extend(argv, toolchain->cflags, toolchain->cflag_count);
		strvec_push(argv, arena_printf(arena, "-I%s/include", toolchain->sdk));
		if (!is_wrapper)
			strvec_extend(argv, toolchain->includes, toolchain->include_count);
		strvec_push(argv, "-c");
	} else {
		push_all(argv, xtensa_common_flags, COUNT(xtensa_common_flags));
		push_all(argv, xtensa_compile_only_flags, COUNT(xtensa_compile_only_flags));
		strvec_push(argv, arena_printf(arena, "--xtensa-core=%s", toolchain->core));
		strvec_push(argv, arena_printf(arena, "--xtensa-system=%s", toolchain->xtensa_system));
		strvec_extend(argv, toolchain->cflags, toolchain->cflag_count);
		strvec_push(argv, arena_printf(arena, "-I%s", toolchain->sdk));
		strvec_push(argv, arena_printf(arena, "-I%s/torch/include", toolchain->sdk));
		strvec_push(argv, arena_printf(arena, "-I%s/c10/include", toolchain->sdk));
		if (!is_wrapper)
			strvec_extend(argv, toolchain->includes, toolchain->include_count);
	}
	strvec_push(argv, "-o");
	strvec_push(argv, (char *)object);
	strvec_push(argv, (char *)source);
}

void target_link_command(const struct toolchain *toolchain, const char *library,
                         char *const *objects, size_t object_count, int core,
                         struct strvec *argv)
{
	struct arena *arena = argv->arena;
	const char *sdk = toolchain->sdk;
	strvec_extend(argv, toolchain->compiler, toolchain->compiler_words);
	if (toolchain->target == BCO_TARGET_HOST) {
		strvec_push(argv, "-shared");
		strvec_push(argv, "-o");
		strvec_push(argv, (char *)library);
		strvec_extend(argv, objects, object_count);
		strvec_push(argv, core < 0 ? arena_printf(arena, "%s/lib/core_single.o", sdk)
		                           : arena_printf(arena, "%s/lib/core_cpu%d.o", sdk, core));
		/* UBSan's handlers before the runtime they report through. */
		const char *undefined = sanitize_undefined_handlers(arena, toolchain);
		if (undefined)
			strvec_push(argv, (char *)undefined);
		strvec_push(argv, (char *)sanitize_runtime_archive(arena, toolchain));
		strvec_push(argv, "-Wl,-Bsymbolic");
		strvec_push(argv, "-Wl,--no-undefined");
		/* The debug information (nine tenths of a core library, most of
		 * it the host SDK's) compressed: the runner reads every byte of
		 * each core library it opens to check its id, gdb, valgrind and
		 * the sanitizers' symbolizers read it as it is, and a bundle is
		 * less than half the size. */
		strvec_push(argv, "-Wl,--compress-debug-sections=zlib");
		sanitize_link_flags(toolchain, argv);
		strvec_extend(argv, toolchain->ldflags, toolchain->ldflag_count);
		return;
	}
	push_all(argv, xtensa_common_flags, COUNT(xtensa_common_flags));
	strvec_push(argv, arena_printf(arena, "--xtensa-core=%s", toolchain->core));
	strvec_push(argv, arena_printf(arena, "--xtensa-system=%s", toolchain->xtensa_system));
	strvec_push(argv, arena_printf(arena, "-I%s", sdk));
	strvec_push(argv, arena_printf(arena, "-I%s/torch/include", sdk));
	strvec_push(argv, arena_printf(arena, "-I%s/c10/include", sdk));
	strvec_push(argv, "-o");
	strvec_push(argv, (char *)library);
	strvec_extend(argv, objects, object_count);
	strvec_push(argv, arena_printf(arena, "%s/neuron/libneuroncustomop.a", sdk));
	strvec_push(argv, arena_printf(arena, "%s/c10/lib/libc10.a", sdk));
	strvec_push(argv, "-lloader");
	strvec_push(argv, core < 0 ? arena_printf(arena, "-mlsp=%s/lsp_fll_load_cpus/lsp_fll_load_cpu_single", sdk)
	                           : arena_printf(arena, "-mlsp=%s/lsp_fll_load_cpus/lsp_fll_load_cpu%d", sdk, core));
	strvec_push(argv, "-lxmem");
	strvec_push(argv, "-lhal");
	strvec_push(argv, "-lc++-e");
	strvec_push(argv, "-lm");
	strvec_push(argv, "-lgcc");
	strvec_push(argv, arena_printf(arena, "%s/neuron/libcweak.a", sdk));
	strvec_extend(argv, toolchain->ldflags, toolchain->ldflag_count);
}

void target_pack_command(const struct toolchain *toolchain, const char *library,
                         const char *packed, const char *stripped, struct strvec *argv)
{
	struct arena *arena = argv->arena;
	strvec_push(argv, (char *)toolchain->packer);
	strvec_push(argv, "-e");
	strvec_push(argv, "lib_func");
	strvec_push(argv, arena_printf(arena, "--xtensa-core=%s", toolchain->core));
	strvec_push(argv, arena_printf(arena, "--xtensa-system=%s", toolchain->xtensa_system));
	strvec_push(argv, "-o");
	strvec_push(argv, (char *)packed);
	strvec_push(argv, "-s");
	strvec_push(argv, (char *)stripped);
	strvec_push(argv, (char *)library);
}

void target_explain_output(const struct toolchain *toolchain, const char *output, struct buffer *note)
{
	if (toolchain->target != BCO_TARGET_HOST || !output)
		return;
	for (size_t i = 0; i < COUNT(host_only_warnings); i++) {
		const struct host_only_warning *warning = &host_only_warnings[i];
		/* As the compilers tag a warning: "[-Wformat]", "[-Wformat=]". */
		char *tag = arena_printf(note->arena, "[%s", warning->flag);
		const char *at = strstr(output, tag);
		if (at && (at[strlen(tag)] == ']' || at[strlen(tag)] == '='))
			buffer_printf(note, "build-custom-op: note: %s stays a warning on the host target, which "
			              "is 64-bit, while the device is 32-bit: %s. The device compiles with "
			              "-Werror: check this line against the device's types.\n",
			              warning->flag, warning->reason);
	}
}

size_t target_command_environment(const struct toolchain *toolchain, const char *extra[3])
{
	/* The license decides whether the tools run at all; a bare tool name
	 * means whatever PATH finds, so the place found counts. */
	extra[0] = toolchain->license;
	extra[1] = toolchain->compiler_location;
	extra[2] = toolchain->packer_location;
	return 3;
}
