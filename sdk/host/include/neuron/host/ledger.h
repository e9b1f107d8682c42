/* neuron/host/ledger.h - what the accessors' inline code tells the core
 * ledger, the runtime's record of what each core does to tensor memory
 * (how often each accessor is used, and which elements of the output it
 * writes); run-custom-op's output checks and profiles read it. */
#ifndef NEURON_HOST_LEDGER_H
#define NEURON_HOST_LEDGER_H

#include <stddef.h>
#include <stdint.h>

namespace neuron_host {

struct TensorImpl;

// Uses of element accessors during the call in progress: of read-only
// ones, and of writable ones (each use of which counts as a write: it
// returns a reference the kernel may write through).
extern uint64_t element_reads_counted;
extern uint64_t element_writes_counted;

// The run of elements written last through an element accessor, [begin,
// end) of tensor's memory, not yet in the ledger: a write that continues it
// (or writes its last element again) costs a compare and a store.
struct PendingWrites {
    const TensorImpl *tensor; // NULL: none
    const char *begin;
    const char *end;
};
extern PendingWrites pending_writes;

// Records a use of a writable accessor on element of tensor, whose writes
// are tracked (tensor.tracks_writes), when it does not continue the
// pending run: the run goes into the ledger and a new one starts.
void record_element_write(const TensorImpl &tensor, const void *element, size_t size);

} // namespace neuron_host

#endif
