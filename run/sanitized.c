/* sanitized.c - host builds made with build-custom-op --sanitize=address:
 * which ASan runtime a core library needs, and whether this process has it
 * (see sanitized.h). */
#define _GNU_SOURCE /* RTLD_NOLOAD, RTLD_DEFAULT */

#include "sanitized.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"

/* The file names the compilers give their shared ASan runtime. */
static int is_asan_runtime(const char *name)
{
	return strncmp(name, "libasan.so", 10) == 0 || strncmp(name, "libclang_rt.asan", 16) == 0;
}

/* What only a build made with --sanitize=address needs: a library that
 * merely uses ASan (built by hand, or in a sanitized test suite) is loaded
 * as any other. */
static const char reports_library[] = "libcustomop_host_reports.so";

static int read_at(int fd, void *buffer, size_t length, uint64_t offset)
{
	for (size_t done = 0; done < length;) {
		ssize_t got = pread(fd, (char *)buffer + done, length - done, (off_t)(offset + done));
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	return 0;
}

/* The file offset of the virtual address vaddr, through the PT_LOAD segments. */
static int file_offset(const Elf64_Phdr *segments, size_t count, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < count; i++)
		if (segments[i].p_type == PT_LOAD && vaddr >= segments[i].p_vaddr &&
		    vaddr - segments[i].p_vaddr < segments[i].p_filesz) {
			*offset = segments[i].p_offset + (vaddr - segments[i].p_vaddr);
			return 0;
		}
	return -1;
}

/* The NUL-terminated string at offset of the string table; NULL if not whole. */
static char *string_at(int fd, uint64_t table, uint64_t table_size, uint64_t offset, char *out, size_t size)
{
	if (offset >= table_size)
		return NULL;
	size_t length = table_size - offset < size ? (size_t)(table_size - offset) : size;
	if (read_at(fd, out, length, table + offset) != 0 || !memchr(out, '\0', length))
		return NULL;
	return out;
}

/* Looks for name in each directory of the colon-separated path. */
static int find_in_path(const char *path, const char *name, char *found, size_t size)
{
	for (const char *directory = path; directory && *directory;) {
		size_t length = strcspn(directory, ":");
		snprintf(found, size, "%.*s/%s", (int)length, directory, name);
		if (length && access(found, R_OK) == 0)
			return 0;
		directory += length + (directory[length] == ':');
	}
	return -1;
}

/* Reads the program headers and the dynamic section into *segments and
 * *entries (malloc'ed, freed by the caller whatever the result); returns
 * 1, 0 when there is no dynamic section, or -1 for a damaged file. */
static int read_dynamic(int fd, Elf64_Phdr **segments, size_t *segment_count, Elf64_Dyn **entries,
                        size_t *entry_count)
{
	Elf64_Ehdr header;
	*segments = NULL;
	*entries = NULL;
	if (read_at(fd, &header, sizeof header, 0) != 0 || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
	    header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr) ||
	    header.e_phnum == 0)
		return -1;
	*segment_count = header.e_phnum;
	*segments = malloc(header.e_phnum * sizeof **segments);
	if (!*segments || read_at(fd, *segments, header.e_phnum * sizeof **segments, header.e_phoff) != 0)
		return -1;
	const Elf64_Phdr *dynamic = NULL;
	for (size_t i = 0; i < header.e_phnum; i++)
		if ((*segments)[i].p_type == PT_DYNAMIC)
			dynamic = &(*segments)[i];
	if (!dynamic)
		return 0;
	if (dynamic->p_filesz > (size_t)1024 * 1024)
		return -1;
	*entry_count = dynamic->p_filesz / sizeof(Elf64_Dyn);
	*entries = malloc(*entry_count * sizeof **entries + 1);
	if (!*entries || read_at(fd, *entries, *entry_count * sizeof **entries, dynamic->p_offset) != 0)
		return -1;
	return 1;
}

static int scan_dynamic(int fd, char *runtime, size_t size)
{
	Elf64_Phdr *segments;
	Elf64_Dyn *entries;
	size_t segment_count = 0, count = 0;
	int status = read_dynamic(fd, &segments, &segment_count, &entries, &count);
	uint64_t table_address = 0, table_size = 0, search = UINT64_MAX, table = 0;
	for (size_t i = 0; status == 1 && i < count && entries[i].d_tag != DT_NULL; i++) {
		if (entries[i].d_tag == DT_STRTAB)
			table_address = entries[i].d_un.d_ptr;
		else if (entries[i].d_tag == DT_STRSZ)
			table_size = entries[i].d_un.d_val;
		else if (entries[i].d_tag == DT_RUNPATH || (entries[i].d_tag == DT_RPATH && search == UINT64_MAX))
			search = entries[i].d_un.d_val;
	}
	if (status == 1 && (!table_size || file_offset(segments, segment_count, table_address, &table) != 0))
		status = -1;
	char name[256], directories[4096];
	const char *path = status != 1 || search == UINT64_MAX
	                           ? NULL
	                           : string_at(fd, table, table_size, search, directories, sizeof directories);
	int sanitized = 0, found = 0;
	for (size_t i = 0; status == 1 && i < count && entries[i].d_tag != DT_NULL; i++) {
		if (entries[i].d_tag != DT_NEEDED ||
		    !string_at(fd, table, table_size, entries[i].d_un.d_val, name, sizeof name))
			continue;
		if (strcmp(name, reports_library) == 0)
			sanitized = 1;
		else if (!found && is_asan_runtime(name)) {
			if (find_in_path(path, name, runtime, size) != 0)
				snprintf(runtime, size, "%s", name);
			found = 1;
		}
	}
	if (status != 1)
		found = status;
	else
		found = sanitized && found;
	free(segments);
	free(entries);
	return found;
}

int sanitized_runtime_of(const char *library_path, char *runtime, size_t size)
{
	/* O_NONBLOCK: not waiting on a FIFO for a writer (its reads then fail). */
	int fd = open(library_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	int found = scan_dynamic(fd, runtime, size);
	close(fd);
	return found;
}

/* The last value ASAN_OPTIONS gives option (":" or " " separate them), or NULL. */
static const char *asan_option(const char *options, const char *option, char *value, size_t size)
{
	const char *found = NULL;
	size_t length = strlen(option);
	for (const char *p = options; p && *p;) {
		size_t word = strcspn(p, ": \t\n,");
		if (word > length && strncmp(p, option, length) == 0 && p[length] == '=') {
			snprintf(value, size, "%.*s", (int)(word - length - 1), p + length + 1);
			found = value;
		}
		p += word + (p[word] != '\0');
	}
	return found;
}

int sanitized_runtime_of_build(const char *build, int cores, char *runtime, size_t size)
{
	char library[4096];
	snprintf(library, sizeof library, "%s_cpu0.so", build);
	if (cores == 1 || (cores == 0 && access(library, F_OK) != 0))
		snprintf(library, sizeof library, "%s.so", build);
	return sanitized_runtime_of(library, runtime, size);
}

int sanitized_check_build(const char *build, int cores, struct rco_error *error)
{
	char runtime[4096];
	if (sanitized_runtime_of_build(build, cores, runtime, sizeof runtime) != 1)
		return 0;
	return sanitized_check_process(build, runtime, error);
}

int sanitized_check_process(const char *build, const char *runtime, struct rco_error *error)
{
	const char *slash = strrchr(runtime, '/');
	const char *name = slash ? slash + 1 : runtime;
	void *loaded = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (loaded)
		dlclose(loaded);
	const char *options = getenv("ASAN_OPTIONS");
	char halt[16], suppress[16];
	int options_fit = asan_option(options, "halt_on_error", halt, sizeof halt) && strcmp(halt, "0") == 0 &&
	                  asan_option(options, "suppress_equal_pcs", suppress, sizeof suppress) &&
	                  strcmp(suppress, "0") == 0;
	if (loaded && options_fit)
		return 0;
	const char *other = !loaded && dlsym(RTLD_DEFAULT, "__asan_init")
	                            ? " (this process has another AddressSanitizer runtime: the build and "
	                              "the program must use the same compiler's)"
	                            : "";
	return error_fail(error, RCO_ERROR_BUILD,
	                  "%s was built with --sanitize=address: %s; start the program as\n"
	                  "  LD_PRELOAD=%s ASAN_OPTIONS=%s%s%s PROGRAM ...\n"
	                  "(the runtime first in the process; ASan reports and lets the kernel go "
	                  "on, and the op fails at its end with the first report; run-custom-op "
	                  "does this itself)%s",
	                  build,
	                  loaded ? "AddressSanitizer's runtime is loaded, but ASAN_OPTIONS lacks "
	                           "halt_on_error=0 or suppress_equal_pcs=0"
	                         : "its core libraries need AddressSanitizer's runtime loaded first "
	                           "in the process",
	                  runtime, options && *options ? options : "", options && *options ? ":" : "",
	                  SANITIZED_ASAN_OPTIONS, other);
}
