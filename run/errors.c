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

int error_set(struct rco_error *error, enum rco_status status, const char *op,
              const char *format, ...)
{
	error_clear(error);
	error->status = status;
	snprintf(error->op, sizeof error->op, "%s", op ? op : "");
	va_list args;
	va_start(args, format);
	vsnprintf(error->message, sizeof error->message, format, args);
	va_end(args);
	return (int)status;
}
