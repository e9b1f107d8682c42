/* asan_reports.h - the library (lib/address/libcustomop_host_reports.so)
 * that hands each AddressSanitizer report to the core whose thread made it.
 *
 * ASan takes one report callback per process, while every core library has
 * its own copy of the runtime; this library is loaded once for all of them
 * (each core library of a build with --sanitize=address needs it), so its
 * callback and its thread-local sink are the process's.
 *
 * ASan prints its reports on stderr, one for each bad access: a loop that
 * runs past a block makes one per element.  From the first report of a
 * core on, this library has ASan write them into a file of the process
 * (TMPDIR/build-custom-op-asan.XXXXXX/reports.PID) and copies only the
 * first report of each call (and any report made outside a call) to
 * stderr.  A log_path given in ASAN_OPTIONS is left as it is. */
#ifndef CUSTOMOP_HOST_ASAN_REPORTS_H
#define CUSTOMOP_HOST_ASAN_REPORTS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the reports of one call on one thread go. */
struct customop_host_report_sink {
	char summary[512]; /* the first report, in one line: what, where (the kernel's file:line) */
	int count;         /* reports since the sink was watched */
};

/* From now on, the reports this thread makes go to sink (NULL: nowhere).
 * The first call registers the callback with ASan. */
void customop_host_reports_watch(struct customop_host_report_sink *sink);

/* The file ASan writes its reports into, or NULL while it writes them on
 * stderr; *users is set to 1 when it is the log_path of ASAN_OPTIONS (which
 * then holds every report), else 0. */
const char *customop_host_reports_file(int *users);

/* Writes into summary (size bytes) the one-line summary of an ASan report:
 * "AddressSanitizer: KIND: READ of size N at FILE:LINE:COLUMN in FUNCTION",
 * where the frame is the first one outside the sanitizer and the host SDK
 * (the kernel's), and for a stack address "; the access overflows the
 * variable 'NAME' (line N)". */
void customop_host_report_summary(const char *report, char *summary, size_t size);

#ifdef __cplusplus
}
#endif
#endif
