/* asan_reports.cpp - libcustomop_host_reports.so: hands each AddressSanitizer
 * report to the core whose thread made it, and keeps stderr to the first
 * report of each call (see asan_reports.h).
 *
 * ASan calls the callback while it still holds its report lock, so reports
 * reach it one at a time, and it allocates nothing. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asan_reports.h"

#define EXPORT __attribute__((visibility("default")))

// ASan's, when it is in the process (it always is where this library is
// loaded: a core library built with ASan needs its runtime first).
// NOLINTNEXTLINE(bugprone-reserved-identifier): ASan's own function
extern "C" void __asan_set_error_report_callback(void (*callback)(const char *)) __attribute__((weak));
// Where ASan writes its reports: set (a path prefix, or "stderr"), and the
// file in use (NULL while it writes to stderr).
// NOLINTNEXTLINE(bugprone-reserved-identifier): the sanitizer runtime's own function
extern "C" void __sanitizer_set_report_path(const char *path) __attribute__((weak));
// NOLINTNEXTLINE(bugprone-reserved-identifier): the sanitizer runtime's own function
extern "C" const char *__sanitizer_get_report_path() __attribute__((weak));

namespace {

thread_local customop_host_report_sink *sink;
pthread_once_t registered = PTHREAD_ONCE_INIT;

// Where ASan writes: stderr until the first report of a core; then a file
// of this process, and each call's first report is copied to stderr.  A
// log_path the user gave in ASAN_OPTIONS is left alone.
enum class Destination { stderr_stream, own_file, users_file };
Destination destination = Destination::stderr_stream;
char report_file[PATH_MAX];
char report_directory[PATH_MAX];

// The line of text that starts at line, without its newline.
size_t line_length(const char *line)
{
    return strcspn(line, "\n");
}

// The next line after line, or NULL at the end.
const char *next_line(const char *line)
{
    const char *end = strchr(line, '\n');
    return end ? end + 1 : nullptr;
}

// Whether the line (length bytes) contains text.
bool line_has(const char *line, size_t length, const char *text)
{
    size_t text_length = strlen(text);
    for (size_t i = 0; i + text_length <= length; i++)
        if (memcmp(line + i, text, text_length) == 0)
            return true;
    return false;
}

// A frame of the stack trace: "    #3 0x55d0 in FUNCTION FILE:LINE:COLUMN".
// Sets the function and the location (the last word); false for another line.
bool parse_frame(const char *line, size_t length, const char **function, size_t *function_length,
                 const char **location, size_t *location_length)
{
    size_t i = 0;
    while (i < length && line[i] == ' ')
        i++;
    if (i >= length || line[i] != '#')
        return false;
    const char *in = nullptr;
    for (size_t j = i; j + 4 <= length; j++)
        if (memcmp(line + j, " in ", 4) == 0) {
            in = line + j + 4;
            break;
        }
    if (!in)
        return false;
    const char *end = line + length;
    const char *last_space = end;
    while (last_space > in && last_space[-1] != ' ')
        last_space--;
    *function = in;
    *function_length = last_space > in ? static_cast<size_t>(last_space - 1 - in) : static_cast<size_t>(end - in);
    *location = last_space > in ? last_space : end;
    *location_length = static_cast<size_t>(end - *location);
    return true;
}

// Whether a frame is the sanitizer's or the host SDK's rather than the kernel's.
bool is_runtime_frame(const char *function, size_t function_length, const char *location, size_t location_length)
{
    static const char *const function_prefixes[] = {"__asan", "__interceptor", "___interceptor", "__sanitizer",
                                                    "neuron_host::"};
    for (const char *prefix : function_prefixes)
        if (function_length >= strlen(prefix) && memcmp(function, prefix, strlen(prefix)) == 0)
            return true;
    static const char *const places[] = {"sdk/host/runtime/", "sdk/host/include/", "libsanitizer/", "compiler-rt/",
                                         "libasan", "libclang_rt"};
    for (const char *place : places)
        if (line_has(location, location_length, place))
            return true;
    return false;
}

void write_whole(int descriptor, const char *text)
{
    for (size_t length = strlen(text); length > 0;) {
        ssize_t written = write(descriptor, text, length);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return;
        text += written;
        length -= static_cast<size_t>(written);
    }
}

// Sends ASan's further reports to a new file in a private directory of
// $TMPDIR (or /tmp); stays with stderr when that cannot be made.
void start_report_file()
{
    if (!__sanitizer_set_report_path || !__sanitizer_get_report_path)
        return;
    const char *temporary = getenv("TMPDIR");
    if (!temporary || temporary[0] != '/')
        temporary = "/tmp";
    char directory[PATH_MAX - 64];
    int length = snprintf(directory, sizeof directory, "%s/build-custom-op-asan.XXXXXX", temporary);
    if (length < 0 || static_cast<size_t>(length) >= sizeof directory || !mkdtemp(directory))
        return;
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/reports", directory);
    __sanitizer_set_report_path(prefix);
    const char *file = __sanitizer_get_report_path();
    if (!file || !*file) {
        __sanitizer_set_report_path("stderr");
        rmdir(directory);
        return;
    }
    snprintf(report_file, sizeof report_file, "%s", file);
    snprintf(report_directory, sizeof report_directory, "%s", directory);
    destination = Destination::own_file;
}

// At exit: a file that got no report (each call made one at most) goes,
// with its directory.
__attribute__((destructor)) void remove_empty_report_file()
{
    struct stat status;
    if (destination == Destination::own_file && stat(report_file, &status) == 0 && status.st_size == 0 &&
        unlink(report_file) == 0)
        rmdir(report_directory);
}

void on_report(const char *report)
{
    customop_host_report_sink *target = sink;
    bool first = !target || target->count == 0;
    // ASan wrote it into the file: a call's first report (and one made
    // outside any call) goes to stderr too.
    if (destination == Destination::own_file && first)
        write_whole(STDERR_FILENO, report);
    if (target && target->count++ == 0)
        customop_host_report_summary(report, target->summary, sizeof target->summary);
    if (target && destination == Destination::stderr_stream)
        start_report_file();
}

void register_callback()
{
    if (__sanitizer_get_report_path) {
        const char *file = __sanitizer_get_report_path();
        if (file && *file) {
            snprintf(report_file, sizeof report_file, "%s", file);
            destination = Destination::users_file;
        }
    }
    if (__asan_set_error_report_callback)
        __asan_set_error_report_callback(on_report);
}

} // namespace

EXPORT void customop_host_reports_watch(customop_host_report_sink *new_sink)
{
    pthread_once(&registered, register_callback);
    sink = new_sink;
}

EXPORT const char *customop_host_reports_file(int *users)
{
    *users = destination == Destination::users_file;
    return destination == Destination::stderr_stream ? nullptr : report_file;
}

EXPORT void customop_host_report_summary(const char *report, char *summary, size_t size)
{
    const char *kind = nullptr, *access = nullptr, *function = nullptr, *location = nullptr;
    size_t kind_length = 0, access_length = 0, function_length = 0, location_length = 0;
    // On a stack, ASan names the variable: "[32, 64) 'local' (line 38) <==
    // Memory access at offset 64 overflows this variable".
    const char *variable = nullptr, *relation = nullptr;
    size_t variable_length = 0, relation_length = 0;
    static const char variable_marker[] = " <== Memory access at offset ";
    bool kernel_frame = false;
    static const char error_marker[] = "ERROR: AddressSanitizer: ";
    for (const char *line = report; line && *line; line = next_line(line)) {
        size_t length = line_length(line);
        const char *error = kind ? nullptr : strstr(line, error_marker);
        if (error && error < line + length) {
            kind = error + strlen(error_marker);
            kind_length = static_cast<size_t>(line + length - kind);
            // "heap-buffer-overflow on address 0x... at pc ...": the kind alone.
            for (size_t i = 0; i + 4 <= kind_length; i++)
                if (memcmp(kind + i, " on ", 4) == 0 || memcmp(kind + i, " at ", 4) == 0) {
                    kind_length = i;
                    break;
                }
            continue;
        }
        if (!access && (strncmp(line, "READ of size ", 13) == 0 || strncmp(line, "WRITE of size ", 14) == 0)) {
            access = line;
            access_length = length;
            const char *at = strstr(line, " at 0x");
            if (at && at < line + length)
                access_length = static_cast<size_t>(at - line);
            continue;
        }
        const char *marker = variable ? nullptr : strstr(line, variable_marker);
        const char *quote = marker ? static_cast<const char *>(memchr(line, '\'', static_cast<size_t>(marker - line)))
                                   : nullptr;
        if (quote && marker < line + length) {
            variable = quote;
            variable_length = static_cast<size_t>(marker - quote);
            relation = marker + strlen(variable_marker);
            relation += strspn(relation, "0123456789 ");
            const char *end = strstr(relation, " this variable");
            relation_length = end && end < line + length ? static_cast<size_t>(end - relation) : 0;
            continue;
        }
        const char *frame_function, *frame_location;
        size_t frame_function_length, frame_location_length;
        if (kernel_frame ||
            !parse_frame(line, length, &frame_function, &frame_function_length, &frame_location, &frame_location_length))
            continue;
        if (!function) {
            // The first frame, in case no frame is the kernel's.
            function = frame_function, function_length = frame_function_length;
            location = frame_location, location_length = frame_location_length;
        }
        if (!is_runtime_frame(frame_function, frame_function_length, frame_location, frame_location_length)) {
            function = frame_function, function_length = frame_function_length;
            location = frame_location, location_length = frame_location_length;
            kernel_frame = true;
        }
    }
    int written = snprintf(summary, size, "AddressSanitizer: %.*s", kind ? static_cast<int>(kind_length) : 12,
                           kind ? kind : "an error");
    size_t used = written > 0 ? static_cast<size_t>(written) : 0;
    if (access && used < size)
        used += static_cast<size_t>(
            snprintf(summary + used, size - used, ": %.*s", static_cast<int>(access_length), access));
    if (location && used < size)
        used += static_cast<size_t>(snprintf(summary + used, size - used, " at %.*s in %.*s",
                                             static_cast<int>(location_length), location,
                                             static_cast<int>(function_length), function));
    if (variable && relation_length && used < size)
        snprintf(summary + used, size - used, "; the access %.*s the variable %.*s", static_cast<int>(relation_length),
                 relation, static_cast<int>(variable_length), variable);
}
