/* sanitized.h - host builds made with build-custom-op --sanitize=address.
 *
 * Their core libraries need AddressSanitizer's runtime, which must be the
 * first library of the process (LD_PRELOAD); loaded later, it ends the
 * process.  Such a library names the runtime in its DT_NEEDED and the
 * runtime's directory in its RUNPATH, so the runner can tell, before it
 * loads anything, whether the process is fit and, if not, what to run. */
#ifndef SANITIZED_H
#define SANITIZED_H

#include <stddef.h>

#include "runcustomop.h"

/* ASAN_OPTIONS a sanitized build needs: a report lets the kernel go on
 * (the op fails at its end, with the report), every report is made (not
 * once per code address for the whole process), and no leak check at exit
 * reports the program's own memory. */
#define SANITIZED_ASAN_OPTIONS "halt_on_error=0:suppress_equal_pcs=0:detect_leaks=0"

/* Finds the ASan runtime the core library at library_path needs, when it
 * was built with --sanitize=address (it needs the host SDK's
 * libcustomop_host_reports.so): 1 with its path in runtime (or its file
 * name, when its RUNPATH does not hold it), 0 when it is not such a build,
 * -1 when the file cannot be read as an ELF library (the loader says why
 * later). */
int sanitized_runtime_of(const char *library_path, char *runtime, size_t size);

/* sanitized_runtime_of for the first core library of the build at build
 * (BUILD_DIR/NAME) of cores core libraries: NAME.so for 1, NAME_cpu0.so for
 * 8, and for 0 as run-custom-op --cores chooses (8 when NAME_cpu0.so
 * exists, else 1). */
int sanitized_runtime_of_build(const char *build, int cores, char *runtime, size_t size);

/* Whether this process can load a library that needs runtime: 0 when the
 * runtime is loaded and ASAN_OPTIONS has what SANITIZED_ASAN_OPTIONS
 * needs, else -1 with error set (RCO_ERROR_BUILD) saying exactly what to
 * run ("LD_PRELOAD=... ASAN_OPTIONS=... PROGRAM"); build names the build in
 * it. */
int sanitized_check_process(const char *build, const char *runtime, struct rco_error *error);

/* Checks a build of cores core libraries (1 or 8) at build (BUILD_DIR/NAME)
 * before it is loaded: 0 when it needs no ASan runtime or the process is
 * fit for it, else -1 with error set (as sanitized_check_process). */
int sanitized_check_build(const char *build, int cores, struct rco_error *error);

#endif
