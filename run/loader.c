/* loader.c - loading one core library of a host build.
 *
 * memfd_create (for the private copy) is Linux's. */
#define _GNU_SOURCE

#include "loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Serialises "is it loaded already?" with the load, across threads. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int fail(char *error, size_t error_size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *error, size_t error_size, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(error, error_size, format, args);
	va_end(args);
	return -1;
}

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

/* Copies the file at path into a new memory file; returns its descriptor,
 * or -1 with errno set. */
static int copy_to_memory(const char *path)
{
	const char *base = strrchr(path, '/');
	int from = open(path, O_RDONLY | O_CLOEXEC);
	if (from < 0)
		return -1;
	int to = memfd_create(base ? base + 1 : path, MFD_CLOEXEC);
	char buffer[65536];
	ssize_t got = 0;
	while (to >= 0 && (got = read(from, buffer, sizeof buffer)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		for (ssize_t done = 0; done < got;) {
			ssize_t wrote = write(to, buffer + done, (size_t)(got - done));
			if (wrote < 0 && errno == EINTR)
				continue;
			if (wrote <= 0) {
				got = -1;
				break;
			}
			done += wrote;
		}
		if (got < 0)
			break;
	}
	int saved = errno;
	close(from);
	if (to >= 0 && got != 0) {
		close(to);
		to = -1;
	}
	errno = saved;
	return to;
}

/* dlopen, or a private copy when path is loaded already (*copy is then
 * its descriptor, else -1). */
static void *load(const char *path, int *copy_descriptor, char *error, size_t error_size)
{
	*copy_descriptor = -1;
	pthread_mutex_lock(&load_lock);
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!handle) {
		handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!handle)
			fail(error, error_size, "cannot load %s: %s", path, dlerror());
		pthread_mutex_unlock(&load_lock);
		return handle;
	}
	dlclose(handle);
	int copy = copy_to_memory(path);
	if (copy < 0) {
		fail(error, error_size, "cannot load %s a second time: cannot copy it: %s", path,
		     strerror(errno));
		pthread_mutex_unlock(&load_lock);
		return NULL;
	}
	char copy_path[64];
	snprintf(copy_path, sizeof copy_path, "/proc/self/fd/%d", copy);
	handle = dlopen(copy_path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		fail(error, error_size, "cannot load %s a second time: %s", path, dlerror());
		close(copy);
	} else {
		*copy_descriptor = copy;
	}
	pthread_mutex_unlock(&load_lock);
	return handle;
}

int core_library_open(struct core_library *library, const char *path, int core, char *error,
                      size_t error_size)
{
	memset(library, 0, sizeof *library);
	library->core = core;
	library->copy_descriptor = -1;
	library->path = strdup(path);
	if (!library->path)
		return fail(error, error_size, "out of memory");
	library->handle = load(path, &library->copy_descriptor, error, error_size);
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
		return fail(error, error_size, "%s is not a host core library: it does not export %s "
		            "(see neuron/host_abi.h); build it with build-custom-op --target host", path,
		            missing);
	int linked = library->linked_core();
	if (linked != core) {
		if (core < 0)
			return fail(error, error_size, "%s was linked for core %d, not as a single-core "
			            "library; rebuild it with build-custom-op --target host", path, linked);
		if (linked < 0)
			return fail(error, error_size, "%s was linked as a single-core library, not for "
			            "core %d; rebuild it with build-custom-op --target host", path, core);
		return fail(error, error_size, "%s was linked for core %d, not core %d; rebuild it "
		            "with build-custom-op --target host", path, linked, core);
	}
	char message[CUSTOMOP_HOST_ERROR_SIZE] = "";
	int count = library->register_ops(on_register, library, message);
	if (count < 0)
		return fail(error, error_size, "%s: registering its ops failed: %s", path, message);
	if (count != library->op_count)
		return fail(error, error_size, "%s: registering its ops failed: it reported %d ops "
		            "but named %d", path, count, library->op_count);
	return 0;
}

void core_library_close(struct core_library *library, int unload)
{
	for (int k = 0; k < library->op_count; k++)
		free(library->op_names[k]);
	free(library->op_names);
	free(library->path);
	if (unload && library->handle) {
		dlclose(library->handle);
		if (library->copy_descriptor >= 0)
			close(library->copy_descriptor);
	}
	memset(library, 0, sizeof *library);
	library->copy_descriptor = -1;
}
