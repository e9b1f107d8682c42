/* print.cpp - the kernel's printf, puts and putchar.  Linked into each core
 * library (-Wl,-Bsymbolic binds the kernel's calls to these), they send the
 * text to call->print with the core id, so the runner can show core 0's
 * output as the device does and flag the others'. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

// Not <stdio.h>: with optimisation it defines putchar inline, which would
// clash with the definition below.
extern "C" {
int vsnprintf(char *buffer, size_t size, const char *format, va_list arguments);
int printf(const char *format, ...);
int vprintf(const char *format, va_list arguments);
int puts(const char *text);
int putchar(int character);
// What printf becomes under _FORTIFY_SOURCE.
// NOLINTNEXTLINE(bugprone-reserved-identifier): glibc's name, which a fortified printf calls
int __printf_chk(int flag, const char *format, ...);
}

namespace neuron_host {
namespace {

int print_formatted(const char *format, va_list arguments)
{
    // Small enough for the core stack; longer text goes to the heap.
    char line[256];
    va_list copy;
    va_copy(copy, arguments);
    int length = vsnprintf(line, sizeof line, format, copy);
    va_end(copy);
    if (length < 0)
        return length;
    if (static_cast<size_t>(length) < sizeof line) {
        print_text(line, static_cast<size_t>(length));
        return length;
    }
    char *text = static_cast<char *>(malloc(static_cast<size_t>(length) + 1));
    if (!text)
        return -1;
    vsnprintf(text, static_cast<size_t>(length) + 1, format, arguments);
    print_text(text, static_cast<size_t>(length));
    free(text);
    return length;
}

} // namespace

void print_text(const char *text, size_t length)
{
    customop_host_call *call = current_call();
    if (call && call->print)
        call->print(call->context, core_id(), text, length);
    else if (write(STDOUT_FILENO, text, length) < 0)
        return; // nowhere else to report it
}

} // namespace neuron_host

extern "C" int printf(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int length = neuron_host::print_formatted(format, arguments);
    va_end(arguments);
    return length;
}

extern "C" int __printf_chk(int flag, const char *format, ...)
{
    (void)flag;
    va_list arguments;
    va_start(arguments, format);
    int length = neuron_host::print_formatted(format, arguments);
    va_end(arguments);
    return length;
}

extern "C" int vprintf(const char *format, va_list arguments)
{
    return neuron_host::print_formatted(format, arguments);
}

extern "C" int puts(const char *text)
{
    size_t length = strlen(text);
    neuron_host::print_text(text, length);
    neuron_host::print_text("\n", 1);
    return static_cast<int>(length + 1);
}

extern "C" int putchar(int character)
{
    char byte = static_cast<char>(character);
    neuron_host::print_text(&byte, 1);
    return static_cast<unsigned char>(byte);
}
