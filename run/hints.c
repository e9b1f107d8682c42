/* hints.c - what a profile suggests changing, each hint with the saving the
 * cost model prices.
 *
 * A hint is a change to the kernel written as a change to the cores'
 * ledgers (the result's copy gone, element accesses made TCM copies, ...):
 * the saving is the op's estimate now less the estimate of the changed
 * ledgers, both priced by cost_model.c.  Each saving is against the op as
 * it is: they do not add up. */
#include "hints.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cost_model.h"
#include "profile.h"

/* A hint is given when it saves at least this share of the op's estimate. */
#define HINT_SHARE 0.01
/* The device's cores: a single-core op could be split over this many. */
#define DEVICE_CORES 8
/* Streams past this many active ones get no TCM buffer. */
#define BUFFERED_STREAMS 4

typedef void (*ledger_change)(struct customop_host_ledger *ledger, size_t element_size);

static const struct customop_host_ledger *ledger_of(const struct core_team *team, int i)
{
	return &team->cores[i]->call.ledger;
}

static size_t element_size_of(const struct core_team *team)
{
	size_t size = check_dtype_size(team->cores[0]->output.dtype);
	return size ? size : 4;
}

/* The op's estimate with each core's ledger changed by change. */
static double estimate_with(const struct core_team *team, ledger_change change)
{
	double slowest = 0, kinds[RCO_PROFILE_KINDS];
	size_t element_size = element_size_of(team);
	for (int i = 0; i < team->count; i++) {
		struct customop_host_ledger changed = *ledger_of(team, i);
		change(&changed, element_size);
		double core_us = cost_model_price(&changed, kinds);
		if (core_us > slowest)
			slowest = core_us;
	}
	return cost_model_op_us(slowest);
}

/* Prices part (a ledger of some counts alone) as it is, and as change
 * makes it. */
static void price_before_and_after(const struct customop_host_ledger *part, ledger_change change,
                                   size_t element_size, double before[RCO_PROFILE_KINDS],
                                   double after[RCO_PROFILE_KINDS])
{
	struct customop_host_ledger changed = *part;
	change(&changed, element_size);
	cost_model_price(part, before);
	cost_model_price(&changed, after);
}

static void without_result_copy(struct customop_host_ledger *ledger, size_t element_size)
{
	(void)element_size;
	ledger->result_copy_bytes = 0;
}

/* Each element-accessor use a block copy of one element (an upper bound:
 * a kernel that uses an element more than once copies it once). */
static void element_accesses_as_tcm_copies(struct customop_host_ledger *ledger, size_t element_size)
{
	ledger->tensor_to_tcm_bytes += ledger->element_reads * element_size;
	ledger->tcm_to_tensor_bytes += ledger->element_writes * element_size;
	ledger->element_reads = ledger->element_writes = 0;
}

static void unbuffered_streams_buffered(struct customop_host_ledger *ledger, size_t element_size)
{
	ledger->buffered_stream_bytes += ledger->unbuffered_stream_elements * element_size;
	ledger->unbuffered_stream_elements = 0;
}

/* The work of one core shared by DEVICE_CORES, which write into
 * get_dst_tensor() (a multicore build copies no result). */
static void shared_by_the_cores(struct customop_host_ledger *ledger, size_t element_size)
{
	(void)element_size;
	uint64_t *counts[] = {&ledger->buffered_stream_bytes, &ledger->tensor_to_tcm_bytes,
	                      &ledger->tcm_to_tensor_bytes, &ledger->elementwise_bytes};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		*counts[i] = (*counts[i] + DEVICE_CORES - 1) / DEVICE_CORES;
	ledger->result_copy_bytes = 0;
}

static void add_hint(struct rco_profile *profile, int kind, double saves_us, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

static void add_hint(struct rco_profile *profile, int kind, double saves_us, const char *format, ...)
{
	if (saves_us < HINT_SHARE * profile->estimated_device_us || saves_us < 0.001 ||
	    profile->hint_count >= RCO_PROFILE_HINTS)
		return;
	struct rco_profile_hint *hint = &profile->hints[profile->hint_count++];
	hint->kind = kind;
	hint->saves_us = saves_us;
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(hint->text, sizeof hint->text, format, arguments);
	va_end(arguments);
}

/* The first and the end of the output elements a ledger's written set
 * holds, over an output of total elements; 0 when it holds none (or was not
 * recorded). */
static int written_span(const struct customop_host_ledger *ledger, int64_t total, int64_t *first,
                        int64_t *end)
{
	const struct customop_host_elements *set = &ledger->written;
	if (!ledger->coverage_recorded || set->count <= 0)
		return 0;
	*first = total, *end = 0;
	if (set->range_count > 0) {
		*first = set->ranges[0].begin;
		*end = set->ranges[set->range_count - 1].end;
	}
	for (int64_t i = 0; set->bits && i < total; i++)
		if (set->bits[i / 64] >> (i % 64) & 1) {
			if (i < *first)
				*first = i;
			if (i + 1 > *end)
				*end = i + 1;
		}
	return *first < *end;
}

static int64_t element_count(const struct customop_host_tensor *tensor)
{
	int64_t count = 1;
	for (int d = 0; d < tensor->rank; d++)
		count *= tensor->sizes[d];
	return count;
}

/* What the busiest core (team index i) wrote, into text: ", which wrote
 * rows 7-14 of the 15" or ", which wrote 1251 of the 10001 elements" ("" when
 * that was not recorded).  Returns 0 when that is no more than an even share
 * of the rows (or of the elements, for an output of one dimension): the
 * imbalance is then the rounding of the rows to the cores. */
static int describe_share(const struct core_team *team, int i, char *text, size_t size)
{
	const struct customop_host_tensor *output = &team->cores[i]->output;
	int64_t total = element_count(output), first, end, cores = team->count;
	text[0] = '\0';
	if (!written_span(ledger_of(team, i), total, &first, &end))
		return 1;
	int64_t rows = output->rank >= 2 ? output->sizes[0] : 0;
	if (rows > 0 && total % rows == 0 && total / rows > 0) {
		int64_t row = total / rows, top = first / row, bottom = (end - 1) / row;
		if (top == bottom)
			snprintf(text, size, ", which wrote row %lld of the %lld", (long long)top,
			         (long long)rows);
		else
			snprintf(text, size, ", which wrote rows %lld-%lld of the %lld", (long long)top,
			         (long long)bottom, (long long)rows);
		return bottom - top + 1 > (rows + cores - 1) / cores;
	}
	int64_t written = ledger_of(team, i)->written.count;
	snprintf(text, size, ", which wrote %lld of the %lld elements", (long long)written,
	         (long long)total);
	return written > (total + cores - 1) / cores;
}

static void result_copy_hint(struct rco_profile *profile, const struct core_team *team)
{
	uint64_t bytes = 0;
	for (int i = 0; i < team->count; i++)
		bytes += ledger_of(team, i)->result_copy_bytes;
	if (!bytes)
		return;
	double copy_us = profile->cores[profile_busiest(profile)].estimated_us[RCO_PROFILE_RESULT_COPY];
	add_hint(profile, RCO_HINT_RESULT_COPY,
	         profile->estimated_device_us - estimate_with(team, without_result_copy),
	         "the kernel returns a tensor of its own, which customop_return_tensor copies into "
	         "the output (%llu bytes read and written, %.3f us): write the result into "
	         "get_dst_tensor() and return that", (unsigned long long)bytes, copy_us);
}

static void element_access_hint(struct rco_profile *profile, const struct core_team *team)
{
	int i = profile_busiest(profile);
	const struct customop_host_ledger *ledger = ledger_of(team, i);
	uint64_t uses = ledger->element_reads + ledger->element_writes;
	if (!uses)
		return;
	size_t element_size = element_size_of(team);
	/* The busiest core's element accesses alone, and as TCM copies. */
	struct customop_host_ledger accesses;
	memset(&accesses, 0, sizeof accesses);
	accesses.element_reads = ledger->element_reads;
	accesses.element_writes = ledger->element_writes;
	double accesses_us[RCO_PROFILE_KINDS], copies_us[RCO_PROFILE_KINDS];
	price_before_and_after(&accesses, element_accesses_as_tcm_copies, element_size, accesses_us,
	                       copies_us);
	add_hint(profile, RCO_HINT_ELEMENT_ACCESS,
	         profile->estimated_device_us - estimate_with(team, element_accesses_as_tcm_copies),
	         "core %d uses element accessors %llu times, an HBM access each (%.3f us): copying "
	         "the elements between the tensors and TCM in blocks (tensor_to_tcm, tcm_to_tensor; "
	         "at most %llu bytes, %zu a use) would take %.3f us, and a stream accessor about as "
	         "long", profile->cores[i].core, (unsigned long long)uses,
	         accesses_us[RCO_PROFILE_HBM_ELEMENTS], (unsigned long long)uses * element_size,
	         element_size, copies_us[RCO_PROFILE_TCM_COPIES]);
}

static void imbalance_hint(struct rco_profile *profile, const struct core_team *team)
{
	if (profile->core_count < 2)
		return;
	int i = profile_busiest(profile);
	double total = 0;
	for (int k = 0; k < profile->core_count; k++)
		total += profile->cores[k].estimated_device_us;
	double mean = total / profile->core_count;
	char share[160];
	if (!describe_share(team, i, share, sizeof share))
		return;
	add_hint(profile, RCO_HINT_IMBALANCE, profile->estimated_device_us - cost_model_op_us(mean),
	         "core %d is the busiest: %.3f us, %.2f times the mean of the %d cores (%.3f us)%s; "
	         "give every core an even share (core i taking rows [rows * i / %d, rows * (i + 1) / "
	         "%d), say) and the op takes about the mean", profile->cores[i].core,
	         profile->cores[i].estimated_device_us, profile->imbalance, profile->core_count, mean,
	         share, profile->core_count, profile->core_count);
}

static void stream_hint(struct rco_profile *profile, const struct core_team *team)
{
	int i = profile_busiest(profile);
	uint64_t elements = ledger_of(team, i)->unbuffered_stream_elements;
	if (!elements)
		return;
	/* The busiest core's unbuffered elements alone, and through a buffer. */
	struct customop_host_ledger unbuffered;
	memset(&unbuffered, 0, sizeof unbuffered);
	unbuffered.unbuffered_stream_elements = elements;
	double unbuffered_us[RCO_PROFILE_KINDS], buffered_us[RCO_PROFILE_KINDS];
	price_before_and_after(&unbuffered, unbuffered_streams_buffered, element_size_of(team),
	                       unbuffered_us, buffered_us);
	add_hint(profile, RCO_HINT_STREAM,
	         profile->estimated_device_us - estimate_with(team, unbuffered_streams_buffered),
	         "on core %d, %llu elements went through stream accessors opened while %d others "
	         "were active, which get no TCM buffer and go at the element accessor's speed "
	         "(%.3f us); through a buffer they would take %.3f us: close a stream before "
	         "opening the fifth, or copy through TCM", profile->cores[i].core,
	         (unsigned long long)elements, BUFFERED_STREAMS,
	         unbuffered_us[RCO_PROFILE_HBM_ELEMENTS], buffered_us[RCO_PROFILE_STREAM]);
}

static void multicore_hint(struct rco_profile *profile, const struct core_team *team)
{
	const struct customop_host_ledger *ledger = ledger_of(team, 0);
	/* The device's cores in SPMD mode take TCM accessors only. */
	if (profile->core_count != 1 || ledger->element_reads || ledger->element_writes ||
	    ledger->stream_reads || ledger->stream_writes)
		return;
	double shared = estimate_with(team, shared_by_the_cores);
	add_hint(profile, RCO_HINT_MULTICORE, profile->estimated_device_us - shared,
	         "the op runs on one core: shared by the %d cores (build with --multicore, or "
	         "multicore=True in custom_op.load(); each core takes its share by get_cpu_id() and "
	         "writes it into get_dst_tensor()) it would take about %.3f us", DEVICE_CORES, shared);
}

static int by_saving(const void *a, const void *b)
{
	const struct rco_profile_hint *first = a, *second = b;
	if (first->saves_us != second->saves_us)
		return first->saves_us > second->saves_us ? -1 : 1;
	return first->kind - second->kind;
}

void hints_build(struct rco_profile *profile, const struct core_team *team)
{
	profile->hint_count = 0;
	if (team->count < 1)
		return;
	result_copy_hint(profile, team);
	element_access_hint(profile, team);
	imbalance_hint(profile, team);
	stream_hint(profile, team);
	multicore_hint(profile, team);
	qsort(profile->hints, (size_t)profile->hint_count, sizeof profile->hints[0], by_saving);
}

static const char *const hint_names[RCO_HINT_KINDS] = {
	[RCO_HINT_RESULT_COPY] = "result_copy", [RCO_HINT_ELEMENT_ACCESS] = "element_access",
	[RCO_HINT_IMBALANCE] = "imbalance", [RCO_HINT_STREAM] = "stream",
	[RCO_HINT_MULTICORE] = "multicore"};

const char *rco_hint_kind_name(int kind)
{
	return kind >= 0 && kind < RCO_HINT_KINDS ? hint_names[kind] : NULL;
}
