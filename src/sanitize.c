/* sanitize.c - the sanitizers of a host build: which were asked for, the
 * flags they add to each compile and link (or, without ASan, the access
 * checks'), and where the compiler keeps AddressSanitizer's runtime. */
#define _DEFAULT_SOURCE /* realpath: the runtime's directory with links resolved */
#include "sanitize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "buffer.h"
#include "diag.h"
#include "target.h"

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static const struct {
	const char *name;
	unsigned bit;
} sanitizer_names[] = {
	{ "address", SANITIZE_ADDRESS },
	{ "undefined", SANITIZE_UNDEFINED },
};

/* ASan reports and goes on (-fsanitize-recover): the runtime then fails
 * the op at its end.  Stopping the kernel inside a report would leave the
 * sanitizer's report lock held. */
static const char *const address_compile_flags[] = {
	"-fsanitize=address", "-fsanitize-recover=address", "-fno-omit-frame-pointer",
};
/* UBSan's checks call the host runtime's handlers, which end the op as a
 * violation; vptr and function need UBSan's own C++ runtime (type info
 * walks), which the host runtime does not replace. */
static const char *const undefined_compile_flags[] = {
	"-fsanitize=undefined", "-fno-sanitize-recover=undefined", "-fno-sanitize=vptr",
};
static const char *const undefined_clang_flags[] = { "-fno-sanitize=function" };
/* Without ASan, the host runtime's access checks
 * (sdk/host/runtime/access_checks.cpp): every load and store of a kernel
 * calls the runtime, which checks to the byte those that land in memory it
 * manages for the kernel (TCM blocks, translation windows, HBM addresses).
 * The compilers' kernel AddressSanitizer in its outline form has exactly
 * that shape and no runtime of its own; the stack and globals are left
 * alone (a kernel's own arrays are --sanitize=address's business). */
static const char *const access_check_gcc_flags[] = {
	"-fsanitize=kernel-address", "--param=asan-instrumentation-with-call-threshold=0",
	"--param=asan-stack=0", "--param=asan-globals=0",
};
static const char *const access_check_clang_flags[] = {
	"-fsanitize=kernel-address", "-mllvm", "-asan-instrumentation-with-call-threshold=0",
	"-mllvm", "-asan-stack=0", "-mllvm", "-asan-globals=0",
};

/* The shared runtime's file name as each compiler's driver names it. */
#if defined(__x86_64__)
#define CLANG_ARCH "x86_64"
#elif defined(__aarch64__)
#define CLANG_ARCH "aarch64"
#elif defined(__i386__)
#define CLANG_ARCH "i386"
#else
#define CLANG_ARCH "unknown"
#endif
static const char gcc_runtime[] = "libasan.so";
static const char *const clang_runtimes[] = {
	"libclang_rt.asan-" CLANG_ARCH ".so", /* clang 14's layout */
	"libclang_rt.asan.so",                /* a per-target runtime directory */
};

static const char reports_library[] = "lib/address/libcustomop_host_reports.so";
static const char address_archive[] = "lib/address/libcustomop_host.a";
static const char undefined_handlers[] = "lib/undefined_handlers.o";

int sanitize_parse(const char *list, enum bco_target target, unsigned *sanitizers, struct diag *diag)
{
	*sanitizers = 0;
	if (!list || !*list)
		return 0;
	for (const char *name = list;;) {
		size_t length = strcspn(name, ",");
		size_t i = 0;
		while (i < COUNT(sanitizer_names) &&
		       (strlen(sanitizer_names[i].name) != length ||
		        strncmp(sanitizer_names[i].name, name, length) != 0))
			i++;
		if (length == 0)
			return diag_fail(diag, BCO_ERROR_USAGE,
			                 "sanitize '%s': an empty name; list address, undefined or both, "
			                 "separated by a comma (address,undefined)", list);
		if (i == COUNT(sanitizer_names))
			return diag_fail(diag, BCO_ERROR_USAGE,
			                 "sanitize '%s': unknown sanitizer '%.*s'; the host target has address "
			                 "(AddressSanitizer) and undefined (UndefinedBehaviorSanitizer), or both "
			                 "as address,undefined", list, (int)length, name);
		*sanitizers |= sanitizer_names[i].bit;
		if (!name[length])
			break;
		name += length + 1;
	}
	if (target != BCO_TARGET_HOST)
		return diag_fail(diag, BCO_ERROR_USAGE,
		                 "sanitize '%s': the sanitizers run on the host target only (the device "
		                 "has no sanitizer runtime); build with --target host (target='host' in "
		                 "Python) and run the op with run-custom-op, or leave the sanitizers out",
		                 list);
	return 0;
}

/* Runs the compiler with -print-file-name=name; returns what it printed
 * (without the newline), or NULL when it could not be run. */
static char *print_file_name(struct arena *arena, const struct toolchain *toolchain, const char *name)
{
	struct strvec argv;
	strvec_init(&argv, arena);
	strvec_extend(&argv, toolchain->compiler, toolchain->compiler_words);
	strvec_push(&argv, arena_printf(arena, "-print-file-name=%s", name));
	int ends[2];
	if (pipe(ends) != 0)
		return NULL;
	fcntl(ends[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attributes;
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attributes);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&actions, ends[1]);
	/* The query is not a step: it gets the signals' default meaning. */
	sigset_t defaults;
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGPIPE);
	posix_spawnattr_setsigdefault(&attributes, &defaults);
	posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
	pid_t child;
	int spawned = posix_spawnp(&child, argv.items[0], &actions, &attributes, argv.items,
	                           toolchain->environment);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attributes);
	close(ends[1]);
	struct buffer output;
	buffer_init(&output, arena);
	char chunk[512];
	for (ssize_t got; spawned == 0 && (got = read(ends[0], chunk, sizeof chunk)) != 0;) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		buffer_append(&output, chunk, (size_t)got);
	}
	close(ends[0]);
	if (spawned != 0)
		return NULL;
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* (ECHILD when the caller ignores SIGCHLD: the output tells.) */
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		return NULL;
	while (output.length && (output.data[output.length - 1] == '\n' || output.data[output.length - 1] == '\r'))
		output.data[--output.length] = '\0';
	return output.data;
}

int sanitize_find_runtime(struct arena *arena, struct toolchain *toolchain, struct diag *diag)
{
	if (!(toolchain->sanitizers & SANITIZE_ADDRESS))
		return 0;
	const char *names[1 + COUNT(clang_runtimes)];
	size_t count = 0;
	if (toolchain->host_compiler != HOST_COMPILER_CLANG)
		names[count++] = gcc_runtime;
	if (toolchain->host_compiler != HOST_COMPILER_GCC)
		for (size_t i = 0; i < COUNT(clang_runtimes); i++)
			names[count++] = clang_runtimes[i];
	struct buffer tried;
	buffer_init(&tried, arena);
	for (size_t i = 0; i < count; i++) {
		/* A driver that does not have the file prints its name back. */
		char *found = print_file_name(arena, toolchain, names[i]);
		char resolved[PATH_MAX];
		if (found && strchr(found, '/') && realpath(found, resolved)) {
			toolchain->asan_runtime = arena_strdup(arena, resolved);
			return 0;
		}
		buffer_printf(&tried, "%s-print-file-name=%s", i ? ", " : "", names[i]);
	}
	return diag_fail(diag, BCO_ERROR_TOOL,
	                 "the compiler '%s' has no AddressSanitizer runtime (asked with %s); install "
	                 "it (Debian: libclang-rt-dev for clang, libasan8 for g++), or set CXX to a "
	                 "compiler that has one",
	                 toolchain->compiler[0], tried.data);
}

static void push_all(struct strvec *argv, const char *const *words, size_t count)
{
	for (size_t i = 0; i < count; i++)
		strvec_push(argv, (char *)words[i]);
}

void sanitize_compile_flags(const struct toolchain *toolchain, struct strvec *argv)
{
	if (toolchain->sanitizers & SANITIZE_ADDRESS)
		push_all(argv, address_compile_flags, COUNT(address_compile_flags));
	else if (toolchain->host_compiler == HOST_COMPILER_GCC)
		push_all(argv, access_check_gcc_flags, COUNT(access_check_gcc_flags));
	else if (toolchain->host_compiler == HOST_COMPILER_CLANG)
		push_all(argv, access_check_clang_flags, COUNT(access_check_clang_flags));
	if (toolchain->sanitizers & SANITIZE_UNDEFINED) {
		push_all(argv, undefined_compile_flags, COUNT(undefined_compile_flags));
		if (toolchain->host_compiler == HOST_COMPILER_CLANG)
			push_all(argv, undefined_clang_flags, COUNT(undefined_clang_flags));
	}
}

const char *sanitize_runtime_archive(struct arena *arena, const struct toolchain *toolchain)
{
	return arena_printf(arena, "%s/%s", toolchain->sdk,
	                    toolchain->sanitizers & SANITIZE_ADDRESS ? address_archive
	                                                             : "lib/libcustomop_host.a");
}

const char *sanitize_undefined_handlers(struct arena *arena, const struct toolchain *toolchain)
{
	if (!(toolchain->sanitizers & SANITIZE_UNDEFINED))
		return NULL;
	return arena_printf(arena, "%s/%s", toolchain->sdk, undefined_handlers);
}

/* The directory of path (which has a '/'). */
static char *directory_of(struct arena *arena, const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash == path ? arena_strdup(arena, "/") : arena_strndup(arena, path, (size_t)(slash - path));
}

void sanitize_link_flags(const struct toolchain *toolchain, struct strvec *argv)
{
	struct arena *arena = argv->arena;
	if (!(toolchain->sanitizers & SANITIZE_ADDRESS))
		return;
	strvec_push(argv, "-fsanitize=address");
	/* clang links no sanitizer runtime into a shared library unless told. */
	if (toolchain->host_compiler == HOST_COMPILER_CLANG)
		strvec_push(argv, "-shared-libsan");
	/* The one library every core's copy of the runtime shares: it hands
	 * each ASan report to the core whose thread made it.  The RUNPATH
	 * finds it, and names the ASan runtime for the runner to preload. */
	char resolved[PATH_MAX];
	const char *sdk = realpath(toolchain->sdk, resolved) ? resolved : toolchain->sdk;
	strvec_push(argv, arena_printf(arena, "%s/%s", sdk, reports_library));
	strvec_push(argv, arena_printf(arena, "-Wl,-rpath,%s", directory_of(arena, arena_printf(arena, "%s/%s", sdk, reports_library))));
	if (toolchain->asan_runtime)
		strvec_push(argv, arena_printf(arena, "-Wl,-rpath,%s", directory_of(arena, toolchain->asan_runtime)));
}

const char *const *sanitize_sdk_files(unsigned sanitizers)
{
	static const char *const none[] = { NULL };
	static const char *const address[] = { address_archive, reports_library, NULL };
	static const char *const undefined[] = { undefined_handlers, NULL };
	static const char *const both[] = { address_archive, reports_library, undefined_handlers, NULL };
	switch (sanitizers & (SANITIZE_ADDRESS | SANITIZE_UNDEFINED)) {
	case SANITIZE_ADDRESS: return address;
	case SANITIZE_UNDEFINED: return undefined;
	case SANITIZE_ADDRESS | SANITIZE_UNDEFINED: return both;
	default: return none;
	}
}
