/* target.h - what differs between the device (xtensa) and the host target:
 * the tools, their fixed flags, the SDK files, and the stack-switch tail. */
#ifndef TARGET_H
#define TARGET_H

#include <stddef.h>

#include "buildcustomop.h"

struct arena;
struct buffer;
struct diag;
struct strvec;

/* The host compiler's family, which decides the names of some warnings. */
enum host_compiler { HOST_COMPILER_OTHER, HOST_COMPILER_CLANG, HOST_COMPILER_GCC };

struct toolchain {
	enum bco_target target;
	const char *sdk;            /* NEURON_CUSTOM_OP, or the host SDK directory */
	const char *core;           /* Q7_CORE (xtensa) */
	const char *xtensa_system;  /* Q7_TOOLS (xtensa) */
	char **compiler;            /* the compiler's words: "xt-clang++", or $CXX split, or
	                               clang++ when it is on PATH, or c++ */
	size_t compiler_words;
	const char *packer;         /* "xt-pkg-loadlib", or NULL on the host */
	char **environment;         /* envp for every step */
	const char *license;        /* LM_LICENSE_FILE as given to the tools (xtensa) */
	const char *compiler_location; /* where the compiler was found, or NULL */
	const char *packer_location;   /* where the packer was found, or NULL */
	char **cflags;              /* the user's cflags */
	size_t cflag_count;
	char **includes;            /* the user's includes, each already "-I..." or "-..." */
	size_t include_count;
	char **launcher;            /* words put before each compile */
	size_t launcher_count;
	enum host_compiler host_compiler; /* the host target's compiler family */
	char **ldflags;             /* the user's ldflags, put at the end of every link */
	size_t ldflag_count;
	unsigned sanitizers;        /* enum sanitizer bits (sanitize.h), host target only */
	const char *asan_runtime;   /* with SANITIZE_ADDRESS: the compiler's ASan runtime, or NULL */
	struct strvec *watched;     /* what the resolution looked at (fs_watch), and then the
	                               up-to-date check (state.c) */
};

/* The end of each <fn>_wrapper body: how the wrapper leaves a switched stack. */
const char *target_stack_switch_tail(enum bco_target target);
/* Fills toolchain from the request and the environment.  When check_files is
 * set, also finds the tools (PATH, then $XTENSA_TOOLS/XtensaTools/bin, then
 * /opt/aws/neuron/gpsimd/bin) and checks the SDK files; errors say what to do.
 * A request with sanitizers also asks the compiler where its ASan runtime is.
 * The host SDK, when the request names none, is $BUILD_CUSTOM_OP_HOST_SDK or
 * the one beside the library or the program. */
int target_resolve(struct arena *arena, const struct bco_request *request, int check_files,
                   struct toolchain *toolchain, struct diag *diag);
/* Appends the compile command of source into object (wrapper: no user includes). */
void target_compile_command(const struct toolchain *toolchain, const char *source,
                            const char *object, int is_wrapper, struct strvec *argv);
/* Appends the link command of library from objects, for core (0..7) or -1 (single). */
void target_link_command(const struct toolchain *toolchain, const char *library,
                         char *const *objects, size_t object_count, int core,
                         struct strvec *argv);
/* Appends the pack command of library into packed and stripped (xtensa only). */
void target_pack_command(const struct toolchain *toolchain, const char *library,
                         const char *packed, const char *stripped, struct strvec *argv);
/* Appends to note, for each warning in a host compile's output that only a
 * 64-bit host gives, a line saying why it stays a warning (nothing for the
 * xtensa target). */
void target_explain_output(const struct toolchain *toolchain, const char *output, struct buffer *note);
/* The strings besides argv that a step's result depends on (for the build log). */
size_t target_command_environment(const struct toolchain *toolchain, const char *extra[3]);

#endif
