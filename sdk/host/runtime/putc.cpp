/* putc.cpp - the kernel's putchar: with optimisation glibc's <stdio.h>
 * inlines putchar(c) as putc(c, stdout), so putc is where it arrives.  Kept
 * apart from print.cpp, which must not see that inline definition. */
#include <stdio.h>

#include "runtime.h"

extern "C" int putc(int character, FILE *stream)
{
    if (stream != stdout)
        return fputc(character, stream);
    char byte = static_cast<char>(character);
    neuron_host::print_text(&byte, 1);
    return static_cast<unsigned char>(byte);
}
