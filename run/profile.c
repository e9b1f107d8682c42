/* profile.c - the profile of a call, and the process-wide collection. */
#include "profile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model.h"
#include "hints.h"

static pthread_mutex_t collection_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rco_profile *collected;
static size_t collected_count, collected_capacity;
static int collections_open;

void profile_build(struct rco_profile *profile, const struct core_team *team, const char *op)
{
	memset(profile, 0, sizeof *profile);
	snprintf(profile->op, sizeof profile->op, "%s", op);
	profile->core_count = team->count;
	double slowest = 0, total = 0;
	for (int i = 0; i < team->count; i++) {
		const struct core *core = team->cores[i];
		const struct customop_host_ledger *ledger = &core->call.ledger;
		struct rco_core_profile *entry = &profile->cores[i];
		entry->core = core->library.core < 0 ? 0 : core->library.core;
		entry->element_reads = ledger->element_reads;
		entry->element_writes = ledger->element_writes;
		entry->stream_reads = ledger->stream_reads;
		entry->stream_writes = ledger->stream_writes;
		entry->buffered_stream_bytes = ledger->buffered_stream_bytes;
		entry->unbuffered_stream_elements = ledger->unbuffered_stream_elements;
		entry->tensor_to_tcm_calls = ledger->tensor_to_tcm_calls;
		entry->tensor_to_tcm_bytes = ledger->tensor_to_tcm_bytes;
		entry->tcm_to_tensor_calls = ledger->tcm_to_tensor_calls;
		entry->tcm_to_tensor_bytes = ledger->tcm_to_tensor_bytes;
		entry->tcm_peak_bytes = ledger->tcm_peak_bytes;
		entry->elementwise_calls = ledger->elementwise_calls;
		entry->elementwise_elements = ledger->elementwise_elements;
		entry->elementwise_bytes = ledger->elementwise_bytes;
		entry->result_copy_bytes = ledger->result_copy_bytes;
		entry->output_elements_written = ledger->coverage_recorded ? ledger->written.count : -1;
		entry->host_us = (double)ledger->host_nanoseconds / 1e3;
		entry->estimated_device_us = cost_model_price(ledger, entry->estimated_us);
		total += entry->estimated_device_us;
		if (entry->estimated_device_us > slowest)
			slowest = entry->estimated_device_us;
	}
	profile->fixed_us = cost_model_fixed_us();
	profile->estimated_device_us = cost_model_op_us(slowest);
	double mean = team->count > 0 ? total / team->count : 0;
	profile->imbalance = mean > 0 ? slowest / mean : 1.0;
	hints_build(profile, team);
}

int profile_busiest(const struct rco_profile *profile)
{
	int found = 0;
	for (int i = 1; i < profile->core_count; i++)
		if (profile->cores[i].estimated_device_us > profile->cores[found].estimated_device_us)
			found = i;
	return found;
}

static const char *const kind_names[RCO_PROFILE_KINDS] = {
	[RCO_PROFILE_HBM_ELEMENTS] = "hbm_element", [RCO_PROFILE_STREAM] = "stream",
	[RCO_PROFILE_TCM_COPIES] = "tcm_copy", [RCO_PROFILE_COMPUTE] = "compute",
	[RCO_PROFILE_RESULT_COPY] = "result_copy"};

const char *rco_profile_kind_name(int kind)
{
	return kind >= 0 && kind < RCO_PROFILE_KINDS ? kind_names[kind] : NULL;
}

int profile_collecting(void)
{
	pthread_mutex_lock(&collection_lock);
	int open = collections_open > 0;
	pthread_mutex_unlock(&collection_lock);
	return open;
}

void profile_collect(const struct rco_profile *profile)
{
	pthread_mutex_lock(&collection_lock);
	if (collections_open > 0) {
		if (collected_count == collected_capacity) {
			size_t capacity = collected_capacity ? 2 * collected_capacity : 16;
			struct rco_profile *grown = realloc(collected, capacity * sizeof *grown);
			if (grown) {
				collected = grown;
				collected_capacity = capacity;
			}
		}
		if (collected_count < collected_capacity)
			collected[collected_count++] = *profile;
	}
	pthread_mutex_unlock(&collection_lock);
}

int rco_profile_collect_begin(size_t *first)
{
	pthread_mutex_lock(&collection_lock);
	collections_open++;
	if (first)
		*first = collected_count;
	pthread_mutex_unlock(&collection_lock);
	return 0;
}

size_t rco_profile_collected(void)
{
	pthread_mutex_lock(&collection_lock);
	size_t count = collected_count;
	pthread_mutex_unlock(&collection_lock);
	return count;
}

int rco_profile_collected_get(size_t index, struct rco_profile *profile)
{
	int status = RCO_ERROR_USAGE;
	pthread_mutex_lock(&collection_lock);
	if (index < collected_count && profile) {
		*profile = collected[index];
		status = 0;
	}
	pthread_mutex_unlock(&collection_lock);
	return status;
}

int rco_profile_collect_end(void)
{
	int status = 0;
	pthread_mutex_lock(&collection_lock);
	if (collections_open == 0) {
		status = RCO_ERROR_USAGE;
	} else if (--collections_open == 0) {
		free(collected);
		collected = NULL;
		collected_count = collected_capacity = 0;
	}
	pthread_mutex_unlock(&collection_lock);
	return status;
}
