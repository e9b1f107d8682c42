/* sanitize.h - the sanitizers of a host build: which were asked for, the
 * flags they add to each compile and link, and where the compiler keeps
 * AddressSanitizer's runtime (the library a sanitized build must have
 * preloaded, named in its RUNPATH for the runner). */
#ifndef SANITIZE_H
#define SANITIZE_H

#include "buildcustomop.h"

struct arena;
struct diag;
struct strvec;
struct toolchain;

enum sanitizer {
	SANITIZE_ADDRESS = 1,   /* ASan: the compiler's runtime, the address variant of the host SDK */
	SANITIZE_UNDEFINED = 2  /* UBSan's checks, reported by the host runtime as violations */
};

/* Reads list ("address,undefined", NULL or "" for none) for target; returns
 * 0 with *sanitizers set (enum sanitizer bits), or -1 with diag set (a
 * usage error) for an unknown or empty name, or any sanitizer on the
 * xtensa target. */
int sanitize_parse(const char *list, enum bco_target target, unsigned *sanitizers, struct diag *diag);
/* Finds AddressSanitizer's shared runtime as the compiler links it (its
 * -print-file-name), with links resolved, into toolchain->asan_runtime;
 * nothing without SANITIZE_ADDRESS.  Returns 0, or -1 with diag set when
 * the compiler has none. */
int sanitize_find_runtime(struct arena *arena, struct toolchain *toolchain, struct diag *diag);
/* Appends the compile flags of the toolchain's sanitizers, or, without
 * ASan, those of the host runtime's access checks (gcc and clang). */
void sanitize_compile_flags(const struct toolchain *toolchain, struct strvec *argv);
/* The host SDK archive of the runtime the link takes, with the sanitizers'
 * (lib/address/ for ASan); for UBSan, the object of its checks' handlers,
 * else NULL. */
const char *sanitize_runtime_archive(struct arena *arena, const struct toolchain *toolchain);
const char *sanitize_undefined_handlers(struct arena *arena, const struct toolchain *toolchain);
/* Appends the link flags of the toolchain's sanitizers (after the host
 * SDK's archives). */
void sanitize_link_flags(const struct toolchain *toolchain, struct strvec *argv);
/* The host SDK files a build with these sanitizers needs, beyond the plain
 * ones: a NULL-terminated list of paths relative to the SDK. */
const char *const *sanitize_sdk_files(unsigned sanitizers);

#endif
