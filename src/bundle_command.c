/* bundle_command.c - build-custom-op bundle: the shape-library flow of
 * custom_op.load() (shape library, schemas, compute build, lib<NAME>.so)
 * from the command line.  It needs PyTorch to build the shape library and
 * read its schemas, so the subcommand is the Python implementation,
 * python3 -m build_custom_op.bundle_command, which takes the arguments, the
 * help text and the messages, and runs itself under an interpreter that can
 * import PyTorch when python3 cannot.  This file only finds the package and
 * the interpreter and hands over (exec, no shell).
 *
 * The package: $BUILD_CUSTOM_OP_PYTHONPATH, else python/ beside the
 * program (the source tree), else lib/python3/dist-packages beside the
 * program's bin/ (make install's default), else the interpreter's own path.
 * The interpreter: $BUILD_CUSTOM_OP_PYTHON, else /usr/bin/python3 (where
 * Debian's PyTorch is), else python3 on PATH. */
#define _DEFAULT_SOURCE /* setenv */
#include "bundle_command.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char module_file[] = "build_custom_op/bundle_command.py";

/* Writes DIRECTORY/RELATIVE into out when it holds the package's module. */
static int has_package(const char *directory, const char *relative, char *out, size_t size)
{
	char module[PATH_MAX];
	int length = snprintf(out, size, "%s%s", directory, relative);
	if (length < 0 || (size_t)length >= size)
		return 0;
	length = snprintf(module, sizeof module, "%s/%s", out, module_file);
	return length > 0 && (size_t)length < sizeof module && access(module, R_OK) == 0;
}

/* The directory to put on PYTHONPATH, or NULL to leave it to the interpreter. */
static const char *package_directory(char *out, size_t size)
{
	const char *chosen = getenv("BUILD_CUSTOM_OP_PYTHONPATH");
	if (chosen && *chosen)
		return chosen;
	char program[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
	if (length <= 0)
		return NULL;
	program[length] = '\0';
	char *slash = strrchr(program, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (has_package(program, "/python", out, size) ||
	    has_package(program, "/../lib/python3/dist-packages", out, size))
		return out;
	return NULL;
}

int bundle_command(int argc, char **argv)
{
	char directory[PATH_MAX];
	const char *package = package_directory(directory, sizeof directory);
	if (package) {
		const char *old = getenv("PYTHONPATH");
		size_t size = strlen(package) + (old ? strlen(old) + 1 : 0) + 1;
		char *path = malloc(size);
		if (!path) {
			fprintf(stderr, "build-custom-op: bundle: out of memory\n");
			return 1;
		}
		snprintf(path, size, "%s%s%s", package, old && *old ? ":" : "", old && *old ? old : "");
		if (setenv("PYTHONPATH", path, 1) != 0) {
			fprintf(stderr, "build-custom-op: bundle: cannot set PYTHONPATH: %s\n",
			        strerror(errno));
			free(path);
			return 1;
		}
		free(path);
	}
	const char *python = getenv("BUILD_CUSTOM_OP_PYTHON");
	if (!python || !*python)
		python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
	char **arguments = calloc((size_t)argc + 3, sizeof *arguments);
	if (!arguments) {
		fprintf(stderr, "build-custom-op: bundle: out of memory\n");
		return 1;
	}
	arguments[0] = (char *)python;
	arguments[1] = (char *)"-m";
	arguments[2] = (char *)"build_custom_op.bundle_command";
	for (int i = 1; i < argc; i++)
		arguments[i + 2] = argv[i];
	fflush(stdout);
	execvp(python, arguments);
	int error = errno;
	fprintf(stderr, "build-custom-op: bundle runs Python with PyTorch, and %s cannot be run: %s; "
	        "install python3 and python3-torch, or set BUILD_CUSTOM_OP_PYTHON\n",
	        python, strerror(error));
	free(arguments);
	return 1;
}
