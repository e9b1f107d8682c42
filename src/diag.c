/* diag.c - the error a room reports, and its public form. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct bco_error {
	enum bco_error_kind kind;
	int schema_index;
	int column;
	int signal;
	char *message;
};

void diag_init(struct diag *diag, struct arena *arena)
{
	memset(diag, 0, sizeof *diag);
	diag->arena = arena;
	diag->schema_index = -1;
}

int diag_fail(struct diag *diag, enum bco_error_kind kind, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	diag->kind = kind;
	diag->message = arena_vprintf(diag->arena, format, args);
	va_end(args);
	return -1;
}

bco_error *diag_export(const struct diag *diag)
{
	bco_error *error = malloc(sizeof *error);
	const char *message = diag->message ? diag->message : "unknown error";
	if (!error)
		return NULL;
	size_t size = strlen(message) + 1;
	error->message = malloc(size);
	if (!error->message) {
		free(error);
		return NULL;
	}
	memcpy(error->message, message, size);
	error->kind = diag->kind;
	error->schema_index = diag->schema_index;
	error->column = diag->column;
	error->signal = diag->signal;
	return error;
}

enum bco_error_kind bco_error_kind(const bco_error *error)
{
	return error ? error->kind : BCO_OK;
}

const char *bco_error_message(const bco_error *error)
{
	return error ? error->message : "";
}

int bco_error_schema_index(const bco_error *error)
{
	return error ? error->schema_index : -1;
}

int bco_error_column(const bco_error *error)
{
	return error ? error->column : 0;
}

int bco_error_signal(const bco_error *error)
{
	return error ? error->signal : 0;
}

void bco_error_free(bco_error *error)
{
	if (!error)
		return;
	free(error->message);
	free(error);
}
