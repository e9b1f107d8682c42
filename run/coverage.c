/* coverage.c - the output checks over the cores' ledgers.
 *
 * Each core's ledger holds the output elements it wrote and read as sorted
 * ranges, and a bitmap where it wrote scattered single elements.  One sweep
 * over the output visits the places where any core's set starts or stops
 * (a cursor per set walks its runs), so it costs the number of runs, not
 * the number of elements: for 2^24 elements split among 8 cores, a few
 * dozen steps.  Adjacent pieces with the same finding become one range. */
#include "coverage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

/* Lines shown of each kind of finding; past them, one line counts the rest. */
#define LINES_PER_KIND 4

/* The runs of one set, in order. */
struct cursor {
	const struct customop_host_elements *set;
	int64_t size;
	size_t range;          /* the first range not yet passed */
	int64_t begin, end;    /* the current run; begin == size when none is left */
};

enum finding_kind { UNWRITTEN, WRITTEN_TWICE, READ_WHILE_WRITTEN, FINDING_KINDS };

struct finding {
	int64_t begin, end;
	unsigned writers;      /* the cores that write it (a bit per core) */
	int reader;            /* READ_WHILE_WRITTEN: the core that read it */
};

struct findings {
	struct finding shown[FINDING_KINDS][LINES_PER_KIND];
	int count[FINDING_KINDS];          /* ranges found of each kind */
	int64_t elements[FINDING_KINDS];   /* elements in them */
	/* The range of each kind being extended (one per reader for reads). */
	struct finding open[FINDING_KINDS - 1];
	struct finding open_read[CORES_MAX];
};

int coverage_mode(const struct rco_options *options, int *mode, struct rco_error *error)
{
	if (options->output_checks != RCO_OUTPUT_CHECKS_DEFAULT) {
		if (options->output_checks < RCO_OUTPUT_CHECKS_ERROR ||
		    options->output_checks > RCO_OUTPUT_CHECKS_OFF)
			return error_set(error, RCO_ERROR_USAGE, NULL, "output_checks %d: expected "
			                 "RCO_OUTPUT_CHECKS_ERROR, _WARN or _OFF (or 0: from %s)",
			                 options->output_checks, RCO_OUTPUT_CHECKS_VARIABLE);
		*mode = options->output_checks;
		return 0;
	}
	const char *value = getenv(RCO_OUTPUT_CHECKS_VARIABLE);
	*mode = RCO_OUTPUT_CHECKS_ERROR;
	if (!value || strcmp(value, "error") == 0)
		return 0;
	if (strcmp(value, "warn") == 0)
		*mode = RCO_OUTPUT_CHECKS_WARN;
	else if (strcmp(value, "off") == 0)
		*mode = RCO_OUTPUT_CHECKS_OFF;
	else
		return error_set(error, RCO_ERROR_USAGE, NULL, RCO_OUTPUT_CHECKS_VARIABLE "=%s: "
		                 "expected error (the default), warn or off", value);
	return 0;
}

int rco_output_checks_default(int *mode, struct rco_error *error)
{
	struct rco_error local;
	if (!error)
		error = &local;
	error_clear(error);
	struct rco_options options;
	memset(&options, 0, sizeof options);
	int ignored;
	return coverage_mode(&options, mode ? mode : &ignored, error);
}

static int64_t element_count(const struct customop_host_tensor *tensor)
{
	int64_t count = 1;
	for (int d = 0; d < tensor->rank; d++)
		count *= tensor->sizes[d];
	return count;
}

int coverage_record_flags(int mode, const struct customop_host_tensor *output)
{
	if (mode == RCO_OUTPUT_CHECKS_OFF || element_count(output) == 0)
		return 0;
	int64_t expected = 1;
	for (int d = output->rank; d-- > 0;) {
		if (output->sizes[d] != 1 && output->strides[d] != expected)
			return 0;
		expected *= output->sizes[d];
	}
	return CUSTOMOP_HOST_RECORD_COVERAGE;
}

static int bit_set(const uint64_t *bits, int64_t at)
{
	return (int)((bits[at / 64] >> (at % 64)) & 1);
}

/* The first index from `from` whose bit is `value`, or size. */
static int64_t next_bit(const uint64_t *bits, int64_t size, int64_t from, int value)
{
	while (from < size) {
		uint64_t word = bits[from / 64];
		if (!value)
			word = ~word;
		word &= ~(uint64_t)0 << (from % 64);
		if (word) {
			int64_t at = from / 64 * 64 + __builtin_ctzll(word);
			return at < size ? at : size;
		}
		from = from / 64 * 64 + 64;
	}
	return size;
}

/* Moves to the first run of the set that ends after `from`. */
static void cursor_advance(struct cursor *cursor, int64_t from)
{
	const struct customop_host_elements *set = cursor->set;
	while (cursor->range < set->range_count && set->ranges[cursor->range].end <= from)
		cursor->range++;
	int64_t start = cursor->size;
	if (cursor->range < set->range_count)
		start = set->ranges[cursor->range].begin > from ? set->ranges[cursor->range].begin : from;
	if (set->bits) {
		int64_t bit = next_bit(set->bits, cursor->size, from, 1);
		if (bit < start)
			start = bit;
	}
	int64_t end = start;
	for (int grew = start < cursor->size; grew;) {
		grew = 0;
		for (; cursor->range < set->range_count && set->ranges[cursor->range].begin <= end;
		     cursor->range++) {
			if (set->ranges[cursor->range].end > end) {
				end = set->ranges[cursor->range].end;
				grew = 1;
			}
		}
		if (set->bits && end < cursor->size && bit_set(set->bits, end)) {
			end = next_bit(set->bits, cursor->size, end, 0);
			grew = 1;
		}
	}
	cursor->begin = start;
	cursor->end = end;
}

static void cursor_start(struct cursor *cursor, const struct customop_host_elements *set,
                         int64_t size)
{
	cursor->set = set;
	cursor->size = size;
	cursor->range = 0;
	cursor_advance(cursor, 0);
}

static int core_id(const struct core_team *team, int index)
{
	int id = team->cores[index]->library.core;
	return id < 0 ? 0 : id;
}

static void keep(struct findings *found, enum finding_kind kind, const struct finding *finding)
{
	if (finding->end <= finding->begin)
		return;
	if (found->count[kind] < LINES_PER_KIND)
		found->shown[kind][found->count[kind]] = *finding;
	found->count[kind]++;
	found->elements[kind] += finding->end - finding->begin;
}

/* Extends the open finding of a kind with [begin, end), or keeps it and
 * opens a new one when it differs or does not touch. */
static void extend(struct findings *found, enum finding_kind kind, struct finding *open,
                   int64_t begin, int64_t end, unsigned writers, int reader)
{
	if (open->end == begin && open->writers == writers && open->reader == reader &&
	    open->end > open->begin) {
		open->end = end;
		return;
	}
	keep(found, kind, open);
	*open = (struct finding){begin, end, writers, reader};
}

static void sweep(const struct core_team *team, int64_t size, struct findings *found)
{
	struct cursor writes[CORES_MAX], reads[CORES_MAX];
	int count = team->count;
	for (int i = 0; i < count; i++) {
		const struct customop_host_ledger *ledger = &team->cores[i]->call.ledger;
		cursor_start(&writes[i], &ledger->written, size);
		cursor_start(&reads[i], &ledger->read, size);
	}
	for (int64_t at = 0; at < size;) {
		unsigned written = 0, read = 0;
		int64_t next = size;
		for (int i = 0; i < count; i++) {
			struct cursor *pair[2] = {&writes[i], &reads[i]};
			for (int k = 0; k < 2; k++) {
				struct cursor *cursor = pair[k];
				if (cursor->end <= at)
					cursor_advance(cursor, at);
				if (cursor->begin <= at) {
					*(k ? &read : &written) |= 1u << i;
					next = cursor->end < next ? cursor->end : next;
				} else {
					next = cursor->begin < next ? cursor->begin : next;
				}
			}
		}
		if (!written)
			extend(found, UNWRITTEN, &found->open[UNWRITTEN], at, next, 0, -1);
		if (written & (written - 1))
			extend(found, WRITTEN_TWICE, &found->open[WRITTEN_TWICE], at, next, written, -1);
		for (int i = 0; i < count; i++)
			if ((read >> i & 1) && (written & ~(1u << i)))
				extend(found, READ_WHILE_WRITTEN, &found->open_read[i], at, next,
				       written & ~(1u << i), i);
		at = next;
	}
	keep(found, UNWRITTEN, &found->open[UNWRITTEN]);
	keep(found, WRITTEN_TWICE, &found->open[WRITTEN_TWICE]);
	for (int i = 0; i < count; i++)
		keep(found, READ_WHILE_WRITTEN, &found->open_read[i]);
}

/* "element 7" or "elements [4128, 4773)", then " of the output", then
 * " (row 32)" or " (rows 32-36)" when the output has rows. */
static void describe_elements(const struct customop_host_tensor *output, int64_t size,
                              const struct finding *finding, char *text, size_t text_size)
{
	int length = finding->end - finding->begin == 1
		             ? snprintf(text, text_size, "element %lld of the output",
		                        (long long)finding->begin)
		             : snprintf(text, text_size, "elements [%lld, %lld) of the output",
		                        (long long)finding->begin, (long long)finding->end);
	if (output->rank < 2 || output->sizes[0] == 0 || length < 0 || (size_t)length >= text_size)
		return;
	int64_t row = size / output->sizes[0];
	long long first = (long long)(finding->begin / row), last = (long long)((finding->end - 1) / row);
	if (first == last)
		snprintf(text + length, text_size - (size_t)length, " (row %lld)", first);
	else
		snprintf(text + length, text_size - (size_t)length, " (rows %lld-%lld)", first, last);
}

/* The cores of team whose bits (by index in the team) are set, as
 * cores_text names them. */
static void describe_cores(const struct core_team *team, unsigned cores, char *text, size_t size)
{
	unsigned ids = 0;
	for (int i = 0; i < team->count; i++)
		if (cores >> i & 1)
			ids |= 1u << core_id(team, i);
	cores_text(ids, text, size);
}

static void describe_finding(const struct core_team *team, const struct customop_host_tensor *output,
                             int64_t size, const char *op, enum finding_kind kind,
                             const struct finding *finding, char *line, size_t line_size)
{
	char elements[160], cores[64];
	describe_elements(output, size, finding, elements, sizeof elements);
	int one = finding->end - finding->begin == 1;
	switch (kind) {
	case UNWRITTEN:
		snprintf(line, line_size, "op %s: output coverage: %s %s written by no core (on the "
		         "device %s what the output buffer held before the op)", op, elements,
		         one ? "was" : "were", one ? "it keeps" : "they keep");
		break;
	case WRITTEN_TWICE:
		describe_cores(team, finding->writers, cores, sizeof cores);
		snprintf(line, line_size, "op %s: output coverage: %s %s written by %s (on the "
		         "device the last core to write wins, in no fixed order)", op, elements,
		         one ? "was" : "were", cores);
		break;
	default:
		describe_cores(team, finding->writers, cores, sizeof cores);
		snprintf(line, line_size, "op %s: output coverage: core %d read %s, which %s "
		         "%s (on the device the read may come before or after the write)", op,
		         core_id(team, finding->reader), elements, cores,
		         __builtin_popcount(finding->writers) == 1 ? "writes" : "write");
		break;
	}
}

static void describe_rest(const char *op, enum finding_kind kind, const struct findings *found,
                          char *line, size_t line_size)
{
	static const char *const what[FINDING_KINDS] = {
		"written by no core", "written by more than one core",
		"read by one core while another writes them"};
	int more = found->count[kind] - LINES_PER_KIND;
	snprintf(line, line_size, "op %s: output coverage: and %d more %s %s (%lld elements "
	         "in the %d ranges)", op, more, more == 1 ? "range" : "ranges", what[kind],
	         (long long)found->elements[kind], found->count[kind]);
}

int coverage_check(const struct core_team *team, const struct customop_host_tensor *output, int mode,
                   const char *op, const char *label, rco_warn_fn warn, void *context,
                   struct rco_error *error)
{
	int64_t size = element_count(output);
	if (mode == RCO_OUTPUT_CHECKS_OFF || size == 0)
		return 0;
	for (int i = 0; i < team->count; i++)
		if (!team->cores[i]->call.ledger.coverage_recorded)
			return 0;
	struct findings found;
	memset(&found, 0, sizeof found);
	sweep(team, size, &found);
	if (!found.count[UNWRITTEN] && !found.count[WRITTEN_TWICE] && !found.count[READ_WHILE_WRITTEN])
		return 0;
	if (mode == RCO_OUTPUT_CHECKS_ERROR)
		error_set(error, RCO_ERROR_OP, op, "%s", "");
	size_t used = 0;
	for (int kind = 0; kind < FINDING_KINDS; kind++) {
		int lines = found.count[kind] < LINES_PER_KIND ? found.count[kind] : LINES_PER_KIND;
		for (int k = 0; k <= lines; k++) {
			char line[RCO_LABEL_SIZE + 512];
			if (k < lines)
				describe_finding(team, output, size, label, (enum finding_kind)kind,
				                 &found.shown[kind][k], line, sizeof line);
			else if (found.count[kind] > LINES_PER_KIND)
				describe_rest(label, (enum finding_kind)kind, &found, line, sizeof line);
			else
				break;
			if (mode == RCO_OUTPUT_CHECKS_WARN) {
				if (warn)
					warn(context, -1, line);
				continue;
			}
			if (error->core < 0 && k < lines && kind != UNWRITTEN) {
				const struct finding *first = &found.shown[kind][k];
				int index = kind == READ_WHILE_WRITTEN ? first->reader
				                                       : __builtin_ctz(first->writers);
				error->core = core_id(team, index);
			}
			if (used < sizeof error->message)
				used += (size_t)snprintf(error->message + used, sizeof error->message - used,
				                         "%s%s", used ? "\n" : "", line);
		}
	}
	return mode == RCO_OUTPUT_CHECKS_ERROR ? (int)RCO_ERROR_OP : 0;
}
