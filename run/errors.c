/* errors.c - filling in a struct rco_error. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void error_clear(struct rco_error *error)
{
	error->status = RCO_OK;
	error->core = -1;
	error->signal = 0;
	error->argument = -1;
	error->op[0] = '\0';
	error->message[0] = '\0';
}

static void set(struct rco_error *error, enum rco_status status, const char *op,
                const char *format, va_list args)
{
	error_clear(error);
	error->status = status;
	snprintf(error->op, sizeof error->op, "%s", op ? op : "");
	vsnprintf(error->message, sizeof error->message, format, args);
}

int error_set(struct rco_error *error, enum rco_status status, const char *op,
              const char *format, ...)
{
	va_list args;
	va_start(args, format);
	set(error, status, op, format, args);
	va_end(args);
	return (int)status;
}

int error_fail(struct rco_error *error, enum rco_status status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	set(error, status, NULL, format, args);
	va_end(args);
	return -1;
}

void error_prefix(struct rco_error *error, const char *format, ...)
{
	va_list args, again;
	va_start(args, format);
	va_copy(again, args);
	int length = vsnprintf(NULL, 0, format, args);
	va_end(args);
	size_t size = sizeof error->message;
	if (length > 0) {
		size_t used = (size_t)length < size ? (size_t)length : size - 1;
		size_t kept = strlen(error->message);
		if (kept > size - 1 - used)
			kept = size - 1 - used;
		memmove(error->message + used, error->message, kept);
		error->message[used + kept] = '\0';
		/* The prefix's own final NUL lands on the message's first byte. */
		char first = error->message[used];
		vsnprintf(error->message, used + 1, format, again);
		error->message[used] = first;
	}
	va_end(again);
}

void cores_text(unsigned cores, char *text, size_t size)
{
	int runs[32][2], count = 0, total = 0;
	for (int i = 0; i < 32; i++) {
		if (!(cores >> i & 1))
			continue;
		total++;
		if (count > 0 && runs[count - 1][1] == i - 1)
			runs[count - 1][1] = i;
		else
			runs[count][0] = runs[count][1] = i, count++;
	}
	/* Runs of two are two items: "cores 0 and 1". */
	int items[64][2], item_count = 0;
	for (int r = 0; r < count; r++) {
		if (runs[r][1] - runs[r][0] == 1) {
			items[item_count][0] = items[item_count][1] = runs[r][0], item_count++;
			items[item_count][0] = items[item_count][1] = runs[r][1], item_count++;
		} else {
			items[item_count][0] = runs[r][0], items[item_count][1] = runs[r][1], item_count++;
		}
	}
	size_t used = (size_t)snprintf(text, size, "%s", total == 1 ? "core" : "cores");
	for (int k = 0; k < item_count && used < size; k++) {
		const char *before = k == 0 ? " " : k == item_count - 1 ? " and " : ", ";
		if (items[k][0] == items[k][1])
			used += (size_t)snprintf(text + used, size - used, "%s%d", before, items[k][0]);
		else
			used += (size_t)snprintf(text + used, size - used, "%s%d-%d", before, items[k][0],
			                         items[k][1]);
	}
}

const char *after_core_prefix(const char *line, int core)
{
	char prefix[32];
	int length = snprintf(prefix, sizeof prefix, "core %d: ", core);
	if (length <= 0 || strncmp(line, prefix, (size_t)length) != 0)
		return NULL;
	return line + length;
}
