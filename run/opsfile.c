/* opsfile.c - the schema record a host build writes beside its libraries. */
#include "opsfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

static char *copy_span(const char *start, size_t length)
{
	char *copy = malloc(length + 1);
	if (copy) {
		memcpy(copy, start, length);
		copy[length] = '\0';
	}
	return copy;
}

/* Splits one op line into its three fields. */
static int parse_op_line(const char *line, size_t length, int number, struct op_record *op,
                         struct rco_error *error)
{
	const char *end = line + length;
	const char *first_tab = memchr(line, '\t', length);
	const char *second_tab = first_tab ? memchr(first_tab + 1, '\t', (size_t)(end - first_tab - 1))
	                                   : NULL;
	if (!second_tab || memchr(second_tab + 1, '\t', (size_t)(end - second_tab - 1)))
		return error_fail(error, RCO_ERROR_BUILD, "%d: expected NAME<TAB>KINDS<TAB>(SIGNATURE)", number);
	if (first_tab == line)
		return error_fail(error, RCO_ERROR_BUILD, "%d: the op name is empty", number);
	for (const char *kind = first_tab + 1; kind < second_tab; kind++)
		if (!strchr("TSifl", *kind) || *kind == '\0')
			return error_fail(error, RCO_ERROR_BUILD, "%d: unknown argument kind '%c' (the "
			                  "kinds are T, S, i, f and l)", number, *kind);
	const char *signature = second_tab + 1;
	if (end - signature < 2 || signature[0] != '(' || end[-1] != ')')
		return error_fail(error, RCO_ERROR_BUILD, "%d: the signature must be the argument list "
		                  "in parentheses", number);
	op->name = copy_span(line, (size_t)(first_tab - line));
	op->kinds = copy_span(first_tab + 1, (size_t)(second_tab - first_tab - 1));
	op->signature = copy_span(signature, (size_t)(end - signature));
	if (!op->name || !op->kinds || !op->signature)
		return error_fail(error, RCO_ERROR_BUILD, "%d: out of memory", number);
	return 0;
}

/* "cores N" (line 2) or "library FILE ID" (the next N lines). */
static int parse_layout_line(const char *line, size_t length, int number, struct ops_file *ops,
                             struct rco_error *error)
{
	if (number == 2) {
		if (length == 7 && memcmp(line, "cores ", 6) == 0 && (line[6] == '1' || line[6] == '8')) {
			ops->cores = line[6] - '0';
			return 0;
		}
		return error_fail(error, RCO_ERROR_BUILD, "%d: expected \"cores 1\" or \"cores 8\"", number);
	}
	const char *space = length > 8 ? memchr(line + 8, ' ', length - 8) : NULL;
	size_t id_length = space ? (size_t)(line + length - space - 1) : 0;
	int hex = id_length == OPSFILE_ID_SIZE - 1;
	for (size_t i = 0; hex && i < id_length; i++)
		hex = strchr("0123456789abcdef", space[1 + i]) != NULL && space[1 + i] != '\0';
	if (length < 8 || memcmp(line, "library ", 8) != 0 || !space || space == line + 8 || !hex)
		return error_fail(error, RCO_ERROR_BUILD, "%d: expected \"library FILE ID\" (the ID 16 "
		                  "hex digits) for core library %d of %d", number,
		                  ops->library_count + 1, ops->cores);
	struct library_record *library = &ops->libraries[ops->library_count];
	library->name = copy_span(line + 8, (size_t)(space - line - 8));
	if (!library->name)
		return error_fail(error, RCO_ERROR_BUILD, "%d: out of memory", number);
	memcpy(library->id, space + 1, id_length);
	library->id[id_length] = '\0';
	ops->library_count++;
	return 0;
}

int ops_parse(const char *text, size_t length, struct ops_file *ops, struct rco_error *error)
{
	memset(ops, 0, sizeof *ops);
	const char *end = text + length;
	const char *line = text;
	int number = 0;
	while (line < end) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		const char *line_end = newline ? newline : end;
		size_t line_length = (size_t)(line_end - line);
		number++;
		if (number == 1) {
			if (line_length == strlen(OPSFILE_HEADER) &&
			    memcmp(line, OPSFILE_HEADER, line_length) == 0) {
				ops->version = 2;
			} else if (line_length == strlen(OPSFILE_HEADER_1) &&
			           memcmp(line, OPSFILE_HEADER_1, line_length) == 0) {
				ops->version = 1;
			} else {
				return error_fail(error, RCO_ERROR_BUILD, "1: not a build-custom-op ops "
				                  "record (the first line must be \"%s\")", OPSFILE_HEADER);
			}
		} else if (ops->version == 2 && (number == 2 || ops->library_count < ops->cores)) {
			if (parse_layout_line(line, line_length, number, ops, error) != 0) {
				ops_free(ops);
				return -1;
			}
		} else {
			struct op_record *grown = realloc(ops->ops, (size_t)(ops->count + 1) * sizeof *grown);
			if (!grown) {
				ops_free(ops);
				return error_fail(error, RCO_ERROR_BUILD, "%d: out of memory", number);
			}
			ops->ops = grown;
			struct op_record *op = &ops->ops[ops->count++];
			memset(op, 0, sizeof *op);
			if (parse_op_line(line, line_length, number, op, error) != 0) {
				ops_free(ops);
				return -1;
			}
			for (int i = 0; i + 1 < ops->count; i++) {
				if (strcmp(ops->ops[i].name, op->name) == 0) {
					error_fail(error, RCO_ERROR_BUILD, "%d: op %s is listed twice", number, op->name);
					ops_free(ops);
					return -1;
				}
			}
		}
		line = newline ? newline + 1 : end;
	}
	if (number == 0)
		return error_fail(error, RCO_ERROR_BUILD, "1: the file is empty (the first line must "
		                  "be \"%s\")", OPSFILE_HEADER);
	if (ops->version == 2 && (ops->cores == 0 || ops->library_count < ops->cores)) {
		int cores = ops->cores;
		ops_free(ops);
		if (cores == 0)
			return error_fail(error, RCO_ERROR_BUILD, "%d: the record ends before its "
			                  "\"cores\" line", number);
		return error_fail(error, RCO_ERROR_BUILD, "%d: the record ends before its %d "
		                  "\"library\" lines", number, cores);
	}
	return 0;
}

int ops_read_file(const char *path, struct ops_file *ops, struct rco_error *error)
{
	memset(ops, 0, sizeof *ops);
	/* O_NONBLOCK: a FIFO is refused below, not waited on for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		return error_fail(error, RCO_ERROR_BUILD, "%s: cannot open: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int failed = errno;
		close(fd);
		return error_fail(error, RCO_ERROR_BUILD, "%s: cannot read: %s", path, strerror(failed));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return error_fail(error, RCO_ERROR_BUILD, "%s: not a regular file", path);
	}
	FILE *file = fdopen(fd, "rb");
	if (!file) {
		int failed = errno;
		close(fd);
		return error_fail(error, RCO_ERROR_BUILD, "%s: cannot open: %s", path, strerror(failed));
	}
	/* A record lists at most a few ops; 1 MiB is far beyond any real one. */
	enum { limit = 1 << 20 };
	char *text = malloc(limit);
	if (!text) {
		fclose(file);
		return error_fail(error, RCO_ERROR_BUILD, "%s: out of memory", path);
	}
	size_t length = fread(text, 1, limit, file);
	int read_error = ferror(file);
	fclose(file);
	if (read_error || length == limit) {
		free(text);
		return error_fail(error, RCO_ERROR_BUILD, "%s: %s", path,
		                  read_error ? "cannot read" : "larger than 1 MiB");
	}
	int status = ops_parse(text, length, ops, error);
	free(text);
	if (status != 0)
		error_prefix(error, "%s:", path);
	return status;
}

const struct op_record *ops_find(const struct ops_file *ops, const char *name)
{
	for (int i = 0; i < ops->count; i++)
		if (strcmp(ops->ops[i].name, name) == 0)
			return &ops->ops[i];
	return NULL;
}

void ops_list_names(const struct ops_file *ops, char *out, size_t out_size)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < ops->count && used < out_size; i++)
		used += (size_t)snprintf(out + used, out_size - used, "%s%s", i ? ", " : "",
		                         ops->ops[i].name);
}

/* Finds the parts of "(A, B(x, y), C)" split at the commas outside
 * brackets; stores part index's bounds and returns the number of parts. */
static int split_signature(const char *signature, int index, const char **part_start,
                           size_t *part_length)
{
	size_t length = strlen(signature);
	if (length <= 2)
		return 0;
	int depth = 0, count = 0;
	size_t start = 1;
	for (size_t i = 1; i < length; i++) {
		char c = signature[i];
		int last = i + 1 == length;
		if (c == '(' || c == '[')
			depth++;
		else if ((c == ')' || c == ']') && !last)
			depth--;
		if ((c == ',' && depth == 0) || last) {
			if (count == index) {
				*part_start = signature + start;
				*part_length = i - start;
			}
			count++;
			start = i + 1;
		}
	}
	return count;
}

void op_argument_text(const struct op_record *op, int index, char *out, size_t out_size)
{
	const char *part = NULL;
	size_t part_length = 0;
	int count = split_signature(op->signature, index, &part, &part_length);
	if (part && count == (int)strlen(op->kinds)) {
		while (part_length > 0 && *part == ' ')
			part++, part_length--;
		while (part_length > 0 && part[part_length - 1] == ' ')
			part_length--;
		if (part_length > 0) {
			snprintf(out, out_size, "%.*s", (int)part_length, part);
			return;
		}
	}
	snprintf(out, out_size, "argument %d", index + 1);
}

void ops_free(struct ops_file *ops)
{
	for (int i = 0; i < ops->library_count; i++)
		free(ops->libraries[i].name);
	ops->library_count = 0;
	for (int i = 0; i < ops->count; i++) {
		free(ops->ops[i].name);
		free(ops->ops[i].kinds);
		free(ops->ops[i].signature);
	}
	free(ops->ops);
	ops->ops = NULL;
	ops->count = 0;
}
