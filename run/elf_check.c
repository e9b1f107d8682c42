/* elf_check.c - is a core library whole?  Checked before it is loaded. */
#include "elf_check.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"

/* The end of count entries of entry_size bytes at offset, or UINT64_MAX on overflow. */
static uint64_t table_end(uint64_t offset, uint64_t count, uint64_t entry_size)
{
	if (entry_size != 0 && count > (UINT64_MAX - offset) / entry_size)
		return UINT64_MAX;
	return offset + count * entry_size;
}

/* What is missing from a file of length bytes, in problem; 0 when nothing
 * is.  bytes holds its first available bytes: at least min(length, 64),
 * and its program headers when the file holds them. */
static int describe_damage(const unsigned char *bytes, size_t available, uint64_t length,
                           char *problem, size_t size)
{
	Elf64_Ehdr header;
	if (length < 4 || memcmp(bytes, ELFMAG, SELFMAG) != 0) {
		snprintf(problem, size, "it is not an ELF shared library (%llu bytes, without the ELF "
		         "magic number)", (unsigned long long)length);
		return -1;
	}
	if (length < sizeof header) {
		snprintf(problem, size, "it has %llu bytes, too few for its ELF header",
		         (unsigned long long)length);
		return -1;
	}
	memcpy(&header, bytes, sizeof header);
	if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr))
		return 0; /* not this machine's kind of library: dlopen says so */
	uint64_t programs_end = table_end(header.e_phoff, header.e_phnum, header.e_phentsize);
	uint64_t needed = programs_end;
	if (header.e_shoff != 0) {
		uint64_t sections = table_end(header.e_shoff, header.e_shnum, header.e_shentsize);
		if (sections > needed)
			needed = sections;
	}
	if (needed <= length && programs_end <= available) {
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
		snprintf(problem, size, "it has %llu bytes, but its ELF headers describe %llu",
		         (unsigned long long)length, (unsigned long long)needed);
	return -1;
}

/* Reads count bytes at offset of fd into bytes; returns 0, or -1 with
 * errno set (EIO: the file ended first). */
static int read_at(int fd, unsigned char *bytes, size_t count, off_t offset)
{
	for (size_t done = 0; done < count;) {
		ssize_t got = pread(fd, bytes + done, count - done, offset + (off_t)done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)got;
	}
	return 0;
}

int elf_check_file(int fd, uint64_t length, const char *path, struct rco_error *error)
{
	/* The ELF header, then as far as the program headers' end when the
	 * file holds them (their table is checked against the file first). */
	unsigned char header_bytes[sizeof(Elf64_Ehdr)];
	unsigned char *bytes = header_bytes, *more = NULL;
	size_t available = length < sizeof header_bytes ? (size_t)length : sizeof header_bytes;
	int status = read_at(fd, bytes, available, 0);
	if (status == 0 && available == sizeof header_bytes) {
		Elf64_Ehdr header;
		memcpy(&header, bytes, sizeof header);
		uint64_t end = table_end(header.e_phoff, header.e_phnum, header.e_phentsize);
		if (end > available && end <= length) {
			more = malloc((size_t)end);
			if (more) {
				memcpy(more, header_bytes, available);
				status = read_at(fd, more + available, (size_t)end - available,
				                 (off_t)available);
				bytes = more;
				available = (size_t)end;
			} else {
				errno = ENOMEM;
				status = -1;
			}
		}
	}
	char problem[256];
	if (status != 0)
		status = error_fail(error, RCO_ERROR_BUILD, "cannot read %s: %s", path,
		                    errno == EIO ? "it became shorter while it was read"
		                    : strerror(errno));
	else if (describe_damage(bytes, available, length, problem, sizeof problem) != 0)
		status = error_fail(error, RCO_ERROR_BUILD, "%s is damaged: %s; rebuild it with "
		                    "build-custom-op --target host", path, problem);
	free(more);
	return status;
}
