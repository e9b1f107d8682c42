/* elf_check.h - is a core library whole?  Checked before it is loaded.
 *
 * The loader maps a library's segments from the file as its program
 * headers describe them; a file cut short maps without complaint, and the
 * first touch of a missing page is a SIGBUS.  So the file is checked
 * first: every part its ELF headers describe must be in it. */
#ifndef ELF_CHECK_H
#define ELF_CHECK_H

#include <stdint.h>

#include "runcustomop.h"

/* Returns 0 when the file open at fd (of length bytes, opened from path)
 * holds everything its ELF header, program headers and section headers
 * describe; else -1 with error set (RCO_ERROR_BUILD): "PATH is damaged: it
 * has 1000 bytes, but its ELF headers describe 4096; rebuild it ...", or
 * "cannot read PATH: ...".  Reads its headers only, with pread. */
int elf_check_file(int fd, uint64_t length, const char *path, struct rco_error *error);

#endif
