/* loader.h - loading one core library of a host build.
 *
 * Each core library is loaded as its own copy (RTLD_NOW | RTLD_LOCAL; the
 * eight per-core files are distinct files), so each core has its own
 * runtime state, as each core has its own image on the device.  A file
 * that this process has loaded already (the same build opened twice) is
 * loaded from a private copy, so the two stay apart. */
#ifndef LOADER_H
#define LOADER_H

#include <stddef.h>

#include <neuron/host_abi.h>

#include "runcustomop.h"

struct core_library {
	int core;                 /* the core it runs on: 0..7, or -1 for NAME.so */
	char *path;
	void *handle;
	int (*linked_core)(void);
	int (*register_ops)(void (*callback)(void *context, int index, const char *name),
	                    void *context, char error[CUSTOMOP_HOST_ERROR_SIZE]);
	int (*run)(struct customop_host_call *call);
	char **op_names;          /* in registration order */
	int op_count;
	/* A private copy's memory file, open while the copy is loaded: its
	 * name (/proc/PID/fd/N) must not be taken by another copy meanwhile,
	 * or dlopen would take that for the loaded one. */
	int copy_descriptor;
	/* Loaded with RTLD_NODELETE: a build with --sanitize=address, whose
	 * globals ASan keeps pointers to (its copy's descriptor stays open). */
	int kept_loaded;
};

/* Loads path for core (-1: a single-core build): checks that the file is
 * whole (elf_check.h, from its headers) and that its id is id, the one the
 * record (named record, for messages) gives it (read a piece at a time:
 * the file is never all in memory), loads that file (dlopen, then a check
 * that it did not change meanwhile; a second opening in one process loads
 * a private copy, checked again), checks
 * its linked core and reads its op names.  Returns 0, or -1 with error
 * set (RCO_ERROR_BUILD); call core_library_close in either case. */
int core_library_open(struct core_library *library, const char *path, int core, const char *id,
                      const char *record, struct rco_error *error);
/* Has library use the read-only pages of first (core 0 of the same
 * multicore build) in place of its own that hold the same bytes: the eight
 * core libraries are one program linked for eight cores, and their code
 * and read-only data differ in the core number only.  Eight copies of them
 * in memory would go through the processor's caches eight times over in
 * every call; the eight share one, and each core keeps its own writable
 * data and the page that holds its core number.  A page is shared only
 * when it holds the same bytes in the file and in both libraries' memory
 * (not after a debugger wrote a breakpoint into either, nor when the file
 * changed since first was loaded).  Call before the library runs.  Returns
 * the pages shared (0: none, or a system call failed, and nothing
 * changed).  The shared pages are named after first's file in
 * /proc/PID/maps, so a profiler that reads it names first's file for
 * every core's code (its functions, at the same offsets, are the same). */
size_t core_library_share_code(struct core_library *library, const struct core_library *first);
/* Makes the runtime take back what an abandoned kernel left (its stacks,
 * its TCM blocks), as it does at the start of the next call: the runtime
 * does that first in every customop_host_run, and a call of ABI version 0
 * does nothing else. */
void core_library_take_back(struct core_library *library);
/* Unloads the library (but for one kept loaded) and frees what
 * core_library_open made. */
void core_library_close(struct core_library *library);

#endif
