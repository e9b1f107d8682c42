/* ledger.cpp - the core ledger: counts of each kind of access, the peak of
 * the TCM pool, and which output elements this core wrote and read.
 *
 * Output elements are counted in the output's storage order, the order of
 * the TCM and stream accessors: a write of bytes [a, b) of the output's
 * memory, through any tensor over that memory, writes elements
 * [a / size, ceil(b / size)).  The sets cost nothing per element copied
 * (a TCM copy adds one range, usually merged with the last) and a call or
 * two per element written through an element accessor into the output or
 * into a tensor made by empty(); see element_set.h. */
#include "ledger.h"

#include <string.h>
#include <time.h>

#include "neuron/host/ledger.h"
#include "neuron/host/scalar_type.h"
#include "neuron/host/tensor_impl.h"
#include "element_set.h"
#include "elements.h"
#include "runtime.h"

namespace neuron_host {

uint64_t element_reads_counted;
uint64_t element_writes_counted;
PendingWrites pending_writes;

namespace {

struct LedgerState {
    customop_host_ledger counts; // the sets aside
    bool recording;              // the sets are being recorded
    const char *output_begin;
    const char *output_end;
    size_t element_size;         // the output's
    ElementSet written;
    ElementSet read;
    timespec start;
};

FreedWhenIdle<LedgerState> ledger_state;
LedgerState &ledger = ledger_state.value;

// The output's elements that bytes [at, at + bytes) of its memory touch,
// added to set; false when they are not the output's memory.
bool add_output_elements(ElementSet &set, const void *at, size_t bytes)
{
    const char *begin = static_cast<const char *>(at);
    const char *end = begin + bytes;
    if (begin >= ledger.output_end || end <= ledger.output_begin)
        return false;
    size_t from = static_cast<size_t>((begin > ledger.output_begin ? begin : ledger.output_begin) - ledger.output_begin);
    size_t to = static_cast<size_t>((end < ledger.output_end ? end : ledger.output_end) - ledger.output_begin);
    set.add(static_cast<int64_t>(from / ledger.element_size),
            static_cast<int64_t>((to + ledger.element_size - 1) / ledger.element_size));
    return true;
}

// Puts the pending run of element writes into its set.
void flush_pending_writes()
{
    const TensorImpl *tensor = pending_writes.tensor;
    if (!tensor)
        return;
    pending_writes.tensor = nullptr;
    if (tensor->written) {
        int64_t size = static_cast<int64_t>(c10::elementSize(tensor->dtype));
        const char *data = static_cast<const char *>(tensor->data);
        tensor->written->add((pending_writes.begin - data) / size, (pending_writes.end - data) / size);
    } else if (ledger.recording) {
        add_output_elements(ledger.written, pending_writes.begin,
                            static_cast<size_t>(pending_writes.end - pending_writes.begin));
    }
}

} // namespace

void ledger_begin(customop_host_call *call)
{
    memset(&ledger.counts, 0, sizeof ledger.counts);
    element_reads_counted = 0;
    element_writes_counted = 0;
    pending_writes.tensor = nullptr; // of a call a fault abandoned
    tcm_peak_reset();
    const customop_host_tensor &output = *call->output;
    ledger.recording = (call->record & CUSTOMOP_HOST_RECORD_COVERAGE) != 0;
    ledger.element_size = c10::elementSize(static_cast<c10::ScalarType>(output.dtype));
    int64_t count = element_count(output);
    ledger.output_begin = static_cast<const char *>(output.data);
    ledger.output_end = ledger.output_begin + static_cast<size_t>(count) * ledger.element_size;
    ledger.written.reset(ledger.recording ? count : 0);
    ledger.read.reset(ledger.recording ? count : 0);
    clock_gettime(CLOCK_MONOTONIC, &ledger.start);
}

void ledger_end(customop_host_call *call)
{
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    customop_host_ledger &counts = ledger.counts;
    counts.element_reads = element_reads_counted;
    counts.element_writes = element_writes_counted;
    counts.tcm_peak_bytes = tcm_peak_bytes();
    counts.host_nanoseconds = static_cast<uint64_t>((now.tv_sec - ledger.start.tv_sec) * 1000000000LL +
                                                    (now.tv_nsec - ledger.start.tv_nsec));
    counts.coverage_recorded = ledger.recording;
    flush_pending_writes();
    ledger.written.normalize();
    ledger.read.normalize();
    counts.written = ledger.written.describe();
    counts.read = ledger.read.describe();
    call->ledger = counts;
}

void ledger_track(TensorImpl &tensor, bool made_empty)
{
    if (!ledger.recording)
        return;
    if (made_empty) {
        tensor.written = new ElementSet(tensor.numel);
        tensor.tracks_writes = true;
        return;
    }
    const char *begin = static_cast<const char *>(tensor.data);
    tensor.tracks_writes = begin < ledger.output_end && begin + tensor.byte_size() > ledger.output_begin;
}

void record_element_write(const TensorImpl &tensor, const void *element, size_t size)
{
    flush_pending_writes();
    const char *at = static_cast<const char *>(element);
    pending_writes = PendingWrites{&tensor, at, at + size};
}

void ledger_forget(const TensorImpl &tensor)
{
    if (pending_writes.tensor == &tensor)
        flush_pending_writes();
}

void ledger_read(const TensorImpl &, const void *at, size_t bytes)
{
    if (ledger.recording && bytes > 0)
        add_output_elements(ledger.read, at, bytes);
}

void ledger_write(const TensorImpl &tensor, const void *at, size_t bytes)
{
    if (!ledger.recording || bytes == 0)
        return;
    if (add_output_elements(ledger.written, at, bytes) || !tensor.written)
        return;
    int64_t size = static_cast<int64_t>(c10::elementSize(tensor.dtype));
    int64_t from = static_cast<const char *>(at) - static_cast<const char *>(tensor.data);
    tensor.written->add(from / size, (from + static_cast<int64_t>(bytes) + size - 1) / size);
}

void ledger_tcm_copy(bool to_tcm, size_t bytes)
{
    if (to_tcm) {
        ledger.counts.tensor_to_tcm_calls++;
        ledger.counts.tensor_to_tcm_bytes += bytes;
    } else {
        ledger.counts.tcm_to_tensor_calls++;
        ledger.counts.tcm_to_tensor_bytes += bytes;
    }
}

void ledger_stream(const TensorImpl &tensor, const void *end, size_t element_size, bool writes, bool buffered)
{
    size_t bytes = static_cast<size_t>(static_cast<const char *>(end) - static_cast<const char *>(tensor.data));
    uint64_t elements = bytes / element_size;
    (writes ? ledger.counts.stream_writes : ledger.counts.stream_reads) += elements;
    if (buffered)
        ledger.counts.buffered_stream_bytes += bytes;
    else
        ledger.counts.unbuffered_stream_elements += elements;
    if (writes)
        ledger_write(tensor, tensor.data, bytes);
    else
        ledger_read(tensor, tensor.data, bytes);
}

void ledger_elementwise(int64_t elements, size_t bytes)
{
    ledger.counts.elementwise_calls++;
    ledger.counts.elementwise_elements += static_cast<uint64_t>(elements);
    ledger.counts.elementwise_bytes += bytes;
}

void ledger_result_copied(const TensorImpl &result)
{
    flush_pending_writes();
    ledger.counts.result_copy_bytes += 2 * result.byte_size();
    if (!ledger.recording)
        return;
    if (result.written)
        ledger.written.add(*result.written);
    else
        ledger.written.add(0, result.numel);
}

} // namespace neuron_host
