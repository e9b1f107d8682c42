/* elf_check.c - is a core library whole?  Checked before it is loaded. */
#include "elf_check.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "errors.h"

/* The end of count entries of entry_size bytes at offset, or UINT64_MAX on overflow. */
static uint64_t table_end(uint64_t offset, uint64_t count, uint64_t entry_size)
{
	if (entry_size != 0 && count > (UINT64_MAX - offset) / entry_size)
		return UINT64_MAX;
	return offset + count * entry_size;
}

/* What is missing from bytes, in problem; 0 when nothing is. */
static int describe_damage(const unsigned char *bytes, size_t length, char *problem, size_t size)
{
	Elf64_Ehdr header;
	if (length < 4 || memcmp(bytes, ELFMAG, SELFMAG) != 0) {
		snprintf(problem, size, "it is not an ELF shared library (%zu bytes, without the ELF "
		         "magic number)", length);
		return -1;
	}
	if (length < sizeof header) {
		snprintf(problem, size, "it has %zu bytes, too few for its ELF header", length);
		return -1;
	}
	memcpy(&header, bytes, sizeof header);
	if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr))
		return 0; /* not this machine's kind of library: dlopen says so */
	uint64_t needed = table_end(header.e_phoff, header.e_phnum, header.e_phentsize);
	if (header.e_shoff != 0) {
		uint64_t sections = table_end(header.e_shoff, header.e_shnum, header.e_shentsize);
		if (sections > needed)
			needed = sections;
	}
	if (needed <= length) {
		for (uint16_t i = 0; i < header.e_phnum; i++) {
			Elf64_Phdr segment;
			memcpy(&segment, bytes + header.e_phoff + (uint64_t)i * sizeof segment, sizeof segment);
			uint64_t end = segment.p_offset > UINT64_MAX - segment.p_filesz
			                       ? UINT64_MAX
			                       : segment.p_offset + segment.p_filesz;
			if (segment.p_type == PT_LOAD && end > needed)
				needed = end;
		}
	}
	if (needed <= length)
		return 0;
	if (needed == UINT64_MAX)
		snprintf(problem, size, "its ELF headers are damaged (they describe parts beyond any "
		         "file)");
	else
		snprintf(problem, size, "it has %zu bytes, but its ELF headers describe %llu", length,
		         (unsigned long long)needed);
	return -1;
}

int elf_check_complete(const unsigned char *bytes, size_t length, const char *path,
                       struct rco_error *error)
{
	char problem[256];
	if (describe_damage(bytes, length, problem, sizeof problem) == 0)
		return 0;
	return error_fail(error, RCO_ERROR_BUILD, "%s is damaged: %s; rebuild it with "
	                  "build-custom-op --target host", path, problem);
}
