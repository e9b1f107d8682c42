/* bundle_command.c - build-custom-op bundle: the shape-library flow of
 * custom_op.load() (shape library, schemas, compute build, lib<NAME>.so)
 * from the command line.  It needs PyTorch to build the shape library and
 * read its schemas, so the subcommand is the Python implementation,
 * build_custom_op/bundle_command.py, which takes the arguments, the help
 * text and the messages, and runs itself under an interpreter that can
 * import PyTorch when python3 cannot.  This file only finds the package and
 * the interpreter and hands over (exec, no shell).
 *
 * Python starts isolated (-I): neither the current directory nor
 * PYTHONPATH nor the user's site directory is on its path, so a torch.py
 * or a build_custom_op/ where the command runs is never imported.  The
 * package is given by path instead: the script
 * PACKAGE_DIR/build_custom_op/bundle_command.py puts PACKAGE_DIR on the
 * path itself.  PACKAGE_DIR: $BUILD_CUSTOM_OP_PYTHONPATH, else python/
 * beside the program (the source tree), else lib/python3/dist-packages
 * beside the program's bin/ (make install's default), else
 * lib/python3.N/site-packages there (pip's, in a virtual environment);
 * without one, python3 -I -m build_custom_op.bundle_command finds the
 * package on the interpreter's own path.  The interpreter:
 * $BUILD_CUSTOM_OP_PYTHON, else python3 beside the program (a virtual
 * environment's, or /usr/bin's for Debian's package), else
 * /usr/bin/python3 (where Debian's PyTorch is), else python3 on PATH. */
#include "bundle_command.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char module_file[] = "build_custom_op/bundle_command.py";

/* Writes DIRECTORY/RELATIVE/build_custom_op/bundle_command.py into script
 * when that file exists. */
static int has_package(const char *directory, const char *relative, char *script, size_t size)
{
	int length = snprintf(script, size, "%s%s/%s", directory, relative, module_file);
	return length > 0 && (size_t)length < size && access(script, R_OK) == 0;
}

/* Whether a site-packages directory under DIRECTORY/../lib (a virtual
 * environment's, python3.N's) holds the package; writes its script. */
static int has_site_package(const char *directory, char *script, size_t size)
{
	char pattern[PATH_MAX];
	int length = snprintf(pattern, sizeof pattern, "%s/../lib/python3*/site-packages/%s",
	                      directory, module_file);
	if (length <= 0 || (size_t)length >= sizeof pattern)
		return 0;
	glob_t found;
	int matched = glob(pattern, 0, NULL, &found) == 0 && found.gl_pathc > 0 &&
	              strlen(found.gl_pathv[0]) < size;
	if (matched)
		strcpy(script, found.gl_pathv[0]);
	globfree(&found);
	return matched;
}

/* The directory of the running program, or NULL. */
static const char *program_directory(char *program, size_t size)
{
	ssize_t length = readlink("/proc/self/exe", program, size - 1);
	if (length <= 0)
		return NULL;
	program[length] = '\0';
	char *slash = strrchr(program, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return program;
}

/* The script to run, or NULL to leave the package to the interpreter. */
static const char *package_script(const char *directory, char *script, size_t size)
{
	const char *chosen = getenv("BUILD_CUSTOM_OP_PYTHONPATH");
	if (chosen && *chosen)
		return has_package(chosen, "", script, size) ? script : NULL;
	if (directory && (has_package(directory, "/python", script, size) ||
	                  has_package(directory, "/../lib/python3/dist-packages", script, size) ||
	                  has_site_package(directory, script, size)))
		return script;
	return NULL;
}

int bundle_command(int argc, char **argv)
{
	char program[PATH_MAX];
	const char *directory = program_directory(program, sizeof program);
	char script[PATH_MAX];
	const char *found = package_script(directory, script, sizeof script);
	char beside[PATH_MAX];
	const char *python = getenv("BUILD_CUSTOM_OP_PYTHON");
	if ((!python || !*python) && directory) {
		int length = snprintf(beside, sizeof beside, "%s/python3", directory);
		if (length > 0 && (size_t)length < sizeof beside && access(beside, X_OK) == 0)
			python = beside;
	}
	if (!python || !*python)
		python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
	char **arguments = calloc((size_t)argc + 4, sizeof *arguments);
	if (!arguments) {
		fprintf(stderr, "build-custom-op: bundle: out of memory\n");
		return 1;
	}
	int count = 0;
	arguments[count++] = (char *)python;
	arguments[count++] = (char *)"-I";
	if (found) {
		arguments[count++] = (char *)found;
	} else {
		arguments[count++] = (char *)"-m";
		arguments[count++] = (char *)"build_custom_op.bundle_command";
	}
	for (int i = 1; i < argc; i++)
		arguments[count++] = argv[i];
	fflush(stdout);
	execvp(python, arguments);
	int error = errno;
	fprintf(stderr, "build-custom-op: bundle runs Python with PyTorch, and %s cannot be run: %s; "
	        "install python3 and python3-torch, or set BUILD_CUSTOM_OP_PYTHON\n",
	        python, strerror(error));
	free(arguments);
	return 1;
}
