/* core_output.c - what one core printed and warned during a call, kept until it ends. */
#include "core_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runcustomop.h"

/* The first size of a buffer that grows (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES unset). */
#define FIRST_CAPACITY 4096

int core_output_init(struct core_output *output, long limit)
{
	memset(output, 0, sizeof *output);
	output->limit = limit;
	if (limit <= 0)
		return 0;
	output->memory = malloc(CORE_OUTPUT_LOSS_ROOM + (size_t)limit);
	if (!output->memory)
		return -1;
	output->capacity = (size_t)limit;
	return 0;
}

void core_output_reset(struct core_output *output)
{
	output->printed = 0;
	output->warnings_used = 0;
	output->warnings_dropped = 0;
}

/* Makes room for the output grown by length bytes while it has not yet
 * wrapped around; when memory is short the buffer stays as it is, and the
 * oldest output is overwritten as with a fixed size. */
static void grow(struct core_output *output, size_t length)
{
	unsigned long long needed = output->printed + length;
	if (output->limit >= 0 || needed <= output->capacity || output->printed > output->capacity ||
	    output->capacity >= RCO_PRINT_UNSET_LIMIT)
		return;
	size_t capacity = output->capacity ? output->capacity : FIRST_CAPACITY;
	while (capacity < needed && capacity < RCO_PRINT_UNSET_LIMIT)
		capacity *= 2;
	char *grown = realloc(output->memory, CORE_OUTPUT_LOSS_ROOM + capacity);
	if (!grown)
		return;
	output->memory = grown;
	output->capacity = capacity;
}

void core_output_print(struct core_output *output, const char *text, size_t length)
{
	if (output->limit == 0 || length == 0)
		return;
	grow(output, length);
	size_t capacity = output->capacity;
	if (capacity == 0)
		return;
	if (length >= capacity) {
		/* Only the last capacity bytes can stay. */
		output->printed += length - capacity;
		text += length - capacity;
		length = capacity;
	}
	char *ring = output->memory + CORE_OUTPUT_LOSS_ROOM;
	size_t at = (size_t)(output->printed % capacity);
	size_t first = capacity - at < length ? capacity - at : length;
	memcpy(ring + at, text, first);
	memcpy(ring, text + first, length - first);
	output->printed += length;
}

static void reverse(char *start, size_t length)
{
	for (size_t i = 0, j = length; i + 1 < j; i++, j--) {
		char byte = start[i];
		start[i] = start[j - 1];
		start[j - 1] = byte;
	}
}

const char *core_output_printed(struct core_output *output, size_t *length)
{
	size_t capacity = output->capacity;
	*length = 0;
	if (output->printed == 0 || capacity == 0)
		return NULL;
	char *ring = output->memory + CORE_OUTPUT_LOSS_ROOM;
	if (output->printed <= capacity) {
		*length = (size_t)output->printed;
		return ring;
	}
	/* Oldest first: rotate the ring so that it starts at the oldest byte. */
	size_t oldest = (size_t)(output->printed % capacity);
	reverse(ring, oldest);
	reverse(ring + oldest, capacity - oldest);
	reverse(ring, capacity);
	char line[CORE_OUTPUT_LOSS_ROOM];
	unsigned long long lost = output->printed - capacity;
	int line_length =
		output->limit > 0
			? snprintf(line, sizeof line, "[%llu bytes of printf output lost: the buffer holds "
			           "%zu bytes (" RCO_PRINT_BUFFER_VARIABLE ")]\n", lost, capacity)
			: snprintf(line, sizeof line, "[%llu bytes of printf output lost: with "
			           RCO_PRINT_BUFFER_VARIABLE " unset, %d bytes are kept per core and "
			           "op]\n", lost, (int)RCO_PRINT_UNSET_LIMIT);
	if (line_length < 0 || (size_t)line_length >= sizeof line)
		line_length = 0;
	memcpy(ring - line_length, line, (size_t)line_length);
	/* The next call starts afresh; the rotated ring is read once. */
	output->printed = capacity;
	*length = capacity + (size_t)line_length;
	return ring - line_length;
}

void core_output_warn(struct core_output *output, const char *text)
{
	size_t length = strlen(text) + 1;
	if (length > sizeof output->warnings - output->warnings_used) {
		output->warnings_dropped++;
		return;
	}
	memcpy(output->warnings + output->warnings_used, text, length);
	output->warnings_used += length;
}

const char *core_output_next_warning(const struct core_output *output, size_t *at)
{
	if (*at >= output->warnings_used)
		return NULL;
	const char *text = output->warnings + *at;
	*at += strlen(text) + 1;
	return text;
}

void core_output_dropped_warnings(const struct core_output *output, const char *prefix,
                                  void (*each)(void *context, const char *text), void *context)
{
	if (output->warnings_dropped) {
		char text[RCO_LABEL_SIZE + 256];
		snprintf(text, sizeof text, "%s%d more warnings of this call were dropped (%d bytes "
		         "of warnings are kept per core and call)", prefix, output->warnings_dropped,
		         CORE_OUTPUT_WARNING_SPACE);
		each(context, text);
	}
}

void core_output_free(struct core_output *output)
{
	free(output->memory);
	memset(output, 0, sizeof *output);
}
