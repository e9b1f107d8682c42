/* loader.c - loading one core library of a host build.
 *
 * memfd_create and sendfile (for the private copy), mremap, dlinfo and
 * dl_iterate_phdr (for sharing the code of a multicore build) are Linux's
 * and glibc's. */
#define _GNU_SOURCE

#include "loader.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_check.h"
#include "errors.h"
#include "library_id.h"
#include "sanitized.h"

/* Serialises "is it loaded already?" with the load, across threads. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Looks up a function; the memcpy is how ISO C lets a data pointer become a
 * function pointer. */
static int find_function(void *handle, const char *name, void *function, size_t size)
{
	void *symbol = dlsym(handle, name);
	if (!symbol)
		return -1;
	memcpy(function, &symbol, size);
	return 0;
}

static void on_register(void *context, int index, const char *name)
{
	struct core_library *library = context;
	(void)index; /* the runtime reports the ops in index order */
	char **grown = realloc(library->op_names, (size_t)(library->op_count + 1) * sizeof *grown);
	if (!grown)
		return;
	library->op_names = grown;
	library->op_names[library->op_count] = strdup(name ? name : "");
	if (library->op_names[library->op_count])
		library->op_count++;
}

/* Copies the length bytes of the file open at fd into a new memory file
 * named after path, in the kernel (sendfile); returns its descriptor, or
 * -1 with errno set (EIO: the file ended first). */
static int memory_file(const char *path, int fd, size_t length)
{
	const char *base = strrchr(path, '/');
	int copy = memfd_create(base ? base + 1 : path, MFD_CLOEXEC);
	off_t done = 0;
	while (copy >= 0 && (size_t)done < length) {
		ssize_t sent = sendfile(copy, fd, &done, length - (size_t)done);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0) {
			int saved = sent == 0 ? EIO : errno;
			close(copy);
			errno = saved;
			return -1;
		}
	}
	return copy;
}

/* Whether two stats are of the same unchanged file. */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Checks the file open at fd, read from path: a regular file (its stat
 * in *st), whole (elf_check.h), whose id (library_id.h, read a piece at a
 * time) is id, the one the record (named record) gives it. */
static int check_file(int fd, const char *path, const char *record, const char *id,
                      struct stat *st, struct rco_error *error)
{
	if (fstat(fd, st) != 0)
		return error_fail(error, RCO_ERROR_BUILD, "cannot read %s: %s", path,
		                  strerror(errno));
	if (!S_ISREG(st->st_mode))
		return error_fail(error, RCO_ERROR_BUILD, "%s is not a regular file", path);
	size_t length = (size_t)st->st_size;
	if (elf_check_file(fd, (uint64_t)length, path, error) != 0)
		return -1;
	char actual[LIBRARY_ID_SIZE];
	if (lseek(fd, 0, SEEK_SET) != 0 || library_id_of_descriptor(fd, length, actual) != 0)
		return error_fail(error, RCO_ERROR_BUILD, "cannot read %s: %s", path,
		                  errno == EIO ? "it became shorter while it was read"
		                  : strerror(errno));
	if (strcmp(actual, id) != 0)
		return error_fail(error, RCO_ERROR_BUILD, "%s is not the library %s was written for "
		                  "(its id is %s, the record's %s): it changed after the build, or "
		                  "the last build did not finish; rebuild with build-custom-op "
		                  "--target host", path, record, actual, id);
	return 0;
}

/* Loads the library at path, open at fd and checked (check_file) as
 * *read_stat: dlopen of path when it is still that file, or, when this
 * process has loaded path already, of a private copy of it, checked again
 * (*copy is then its descriptor, else -1).  flags: RTLD_NODELETE or 0. */
static void *load(const char *path, int fd, const struct stat *read_stat, const char *record,
                  const char *id, int flags, int *copy_descriptor, struct rco_error *error)
{
	*copy_descriptor = -1;
	/* dlopen searches the library path for a name without a slash: the
	 * file read is the one in the current directory. */
	char *name = malloc(strlen(path) + sizeof "./");
	if (!name) {
		error_fail(error, RCO_ERROR_BUILD, "out of memory");
		return NULL;
	}
	snprintf(name, strlen(path) + sizeof "./", "%s%s", strchr(path, '/') ? "" : "./", path);
	pthread_mutex_lock(&load_lock);
	void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!handle) {
		handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | flags);
		free(name);
		struct stat loaded;
		if (!handle) {
			error_fail(error, RCO_ERROR_BUILD, "cannot load %s: %s", path, dlerror());
		} else if (stat(path, &loaded) != 0 || !same_file(read_stat, &loaded)) {
			dlclose(handle);
			handle = NULL;
			error_fail(error, RCO_ERROR_BUILD, "%s changed while it was being loaded "
			           "(is a build running?); run again when it is done", path);
		}
		pthread_mutex_unlock(&load_lock);
		return handle;
	}
	free(name);
	dlclose(handle);
	int copy = memory_file(path, fd, (size_t)read_stat->st_size);
	if (copy < 0) {
		error_fail(error, RCO_ERROR_BUILD, "cannot load %s a second time: cannot copy it: "
		           "%s", path, strerror(errno));
		pthread_mutex_unlock(&load_lock);
		return NULL;
	}
	/* The copy is what is loaded: the file may have changed since. */
	struct stat copied;
	if (check_file(copy, path, record, id, &copied, error) != 0) {
		close(copy);
		pthread_mutex_unlock(&load_lock);
		return NULL;
	}
	char copy_path[64];
	snprintf(copy_path, sizeof copy_path, "/proc/%ld/fd/%d", (long)getpid(), copy);
	handle = dlopen(copy_path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		error_fail(error, RCO_ERROR_BUILD, "cannot load %s a second time: %s", path,
		           dlerror());
		close(copy);
	} else {
		*copy_descriptor = copy;
	}
	pthread_mutex_unlock(&load_lock);
	return handle;
}

int core_library_open(struct core_library *library, const char *path, int core, const char *id,
                      const char *record, struct rco_error *error)
{
	memset(library, 0, sizeof *library);
	library->core = core;
	library->copy_descriptor = -1;
	library->path = strdup(path);
	if (!library->path)
		return error_fail(error, RCO_ERROR_BUILD, "out of memory");
	/* O_NONBLOCK: a FIFO is refused by check_file, not waited on for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return error_fail(error, RCO_ERROR_BUILD, "%s does not exist, but %s names "
			                  "it; rebuild with build-custom-op --target host", path,
			                  record);
		return error_fail(error, RCO_ERROR_BUILD, "cannot open %s: %s", path,
		                  strerror(errno));
	}
	struct stat st;
	int status = check_file(fd, path, record, id, &st, error);
	/* ASan keeps a pointer to each global of a library it instruments, also
	 * after the library is unloaded, and reads them all when it describes
	 * an address: a sanitized core library stays loaded. */
	char runtime[512];
	library->kept_loaded = status == 0 && sanitized_runtime_of(path, runtime, sizeof runtime) == 1;
	if (status == 0)
		library->handle = load(path, fd, &st, record, id,
		                       library->kept_loaded ? RTLD_NODELETE : 0,
		                       &library->copy_descriptor, error);
	close(fd);
	if (!library->handle)
		return -1;
	const char *missing = NULL;
	if (find_function(library->handle, "customop_host_run", &library->run,
	                  sizeof library->run) != 0)
		missing = "customop_host_run";
	if (find_function(library->handle, "customop_host_register", &library->register_ops,
	                  sizeof library->register_ops) != 0)
		missing = "customop_host_register";
	if (find_function(library->handle, "customop_host_linked_core", &library->linked_core,
	                  sizeof library->linked_core) != 0)
		missing = "customop_host_linked_core";
	if (missing)
		return error_fail(error, RCO_ERROR_BUILD, "%s is not a host core library: it does "
		                  "not export %s (see neuron/host_abi.h); build it with "
		                  "build-custom-op --target host", path, missing);
	int linked = library->linked_core();
	if (linked != core) {
		if (core < 0)
			return error_fail(error, RCO_ERROR_BUILD, "%s was linked for core %d, not "
			                  "as a single-core library; rebuild it with "
			                  "build-custom-op --target host", path, linked);
		if (linked < 0)
			return error_fail(error, RCO_ERROR_BUILD, "%s was linked as a single-core "
			                  "library, not for core %d; rebuild it with "
			                  "build-custom-op --target host", path, core);
		return error_fail(error, RCO_ERROR_BUILD, "%s was linked for core %d, not core %d; "
		                  "rebuild it with build-custom-op --target host", path, linked,
		                  core);
	}
	char message[CUSTOMOP_HOST_ERROR_SIZE] = "";
	int count = library->register_ops(on_register, library, message);
	if (count < 0)
		return error_fail(error, RCO_ERROR_BUILD, "%s: registering its ops failed: %s",
		                  path, message);
	if (count != library->op_count)
		return error_fail(error, RCO_ERROR_BUILD, "%s: registering its ops failed: it "
		                  "reported %d ops but named %d", path, count, library->op_count);
	return 0;
}

void core_library_take_back(struct core_library *library)
{
	if (!library->run)
		return;
	struct customop_host_call call;
	memset(&call, 0, sizeof call);
	call.op = "(taking back an abandoned call)";
	library->run(&call);
}

void core_library_close(struct core_library *library)
{
	for (int k = 0; k < library->op_count; k++)
		free(library->op_names[k]);
	free(library->op_names);
	free(library->path);
	if (library->handle)
		dlclose(library->handle);
	/* Only now: while the copy is loaded its name must stay taken (for
	 * ever, for one that stays loaded). */
	if (library->copy_descriptor >= 0 && !library->kept_loaded)
		close(library->copy_descriptor);
	memset(library, 0, sizeof *library);
	library->copy_descriptor = -1;
}

/* ---- one copy of the code for the eight cores ---- */

/* A loaded library's program headers (in its mapped ELF headers). */
struct loaded_headers {
	ElfW(Addr) base;
	const ElfW(Phdr) *headers;
	ElfW(Half) count;
};

static int find_headers(struct dl_phdr_info *info, size_t size, void *context)
{
	(void)size;
	struct loaded_headers *found = context;
	if (info->dlpi_addr != found->base)
		return 0;
	found->headers = info->dlpi_phdr;
	found->count = info->dlpi_phnum;
	return 1;
}

static int headers_of(void *handle, struct loaded_headers *found)
{
	struct link_map *map = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
		return -1;
	found->base = map->l_addr;
	found->headers = NULL;
	dl_iterate_phdr(find_headers, found);
	return found->headers ? 0 : -1;
}

/* Whether the three pages hold the same bytes.  Not memcmp: under
 * AddressSanitizer the pages of a sanitized library hold its globals'
 * poisoned redzones, which only the library's own code may not read. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOADER_UNSANITIZED __attribute__((no_sanitize("address")))
#endif
#endif
#if !defined(LOADER_UNSANITIZED) && defined(__SANITIZE_ADDRESS__)
#define LOADER_UNSANITIZED __attribute__((no_sanitize_address))
#endif
#ifndef LOADER_UNSANITIZED
#define LOADER_UNSANITIZED
#endif
LOADER_UNSANITIZED static int same_pages(const char *file, const char *shared, const char *own,
                                         size_t page)
{
	const uint64_t *a = (const uint64_t *)file, *b = (const uint64_t *)shared,
	               *c = (const uint64_t *)own;
	uint64_t differ = 0;
	for (size_t i = 0; i < page / sizeof *a; i++)
		differ |= (a[i] ^ b[i]) | (a[i] ^ c[i]);
	return differ == 0;
}

/* Maps the pages of fd's [offset, offset + length) in place of those at
 * own that hold the same bytes there and at shared; returns how many. */
static size_t share_same_pages(int fd, off_t offset, size_t length, int protection, char *own,
                               const char *shared, size_t page)
{
	char *pages = mmap(NULL, length, protection, MAP_PRIVATE, fd, offset);
	if (pages == MAP_FAILED)
		return 0;
	size_t moved = 0;
	for (size_t start = 0; start < length;) {
		size_t end = start;
		while (end < length && same_pages(pages + end, shared + end, own + end, page))
			end += page;
		if (end > start && mremap(pages + start, end - start, end - start,
		                          MREMAP_MAYMOVE | MREMAP_FIXED, own + start) != MAP_FAILED)
			moved += (end - start) / page;
		start = end + page;
	}
	munmap(pages, length);
	return moved;
}

size_t core_library_share_code(struct core_library *library, const struct core_library *first)
{
	struct loaded_headers own, shared;
	if (!library->handle || !first->handle || headers_of(library->handle, &own) != 0 ||
	    headers_of(first->handle, &shared) != 0 || own.count != shared.count)
		return 0;
	int fd = first->copy_descriptor >= 0 ? first->copy_descriptor
	                                     : open(first->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t moved = 0;
	for (ElfW(Half) i = 0; i < own.count; i++) {
		const ElfW(Phdr) *mine = &own.headers[i], *theirs = &shared.headers[i];
		/* Read-only pages mapped straight from the file, at the same
		 * place in both. */
		if (mine->p_type != PT_LOAD || (mine->p_flags & PF_W) ||
		    mine->p_filesz != mine->p_memsz || mine->p_offset % page != mine->p_vaddr % page ||
		    theirs->p_type != PT_LOAD || theirs->p_flags != mine->p_flags ||
		    theirs->p_offset != mine->p_offset || theirs->p_vaddr != mine->p_vaddr ||
		    theirs->p_memsz != mine->p_memsz)
			continue;
		ElfW(Addr) start = mine->p_vaddr / page * page;
		size_t length = (mine->p_vaddr + mine->p_memsz + page - 1) / page * page - start;
		int protection = PROT_READ | (mine->p_flags & PF_X ? PROT_EXEC : 0);
		moved += share_same_pages(fd, (off_t)(mine->p_offset / page * page), length, protection,
		                          (char *)(own.base + start), (const char *)(shared.base + start),
		                          page);
	}
	if (fd != first->copy_descriptor)
		close(fd);
	return moved;
}
