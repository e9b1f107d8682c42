/* neuron/host/ledger.h - what the accessors' inline code tells the core
 * ledger, the runtime's record of what each core does to tensor memory
 * (how often each accessor is used, and which elements of the output it
 * writes); run-custom-op's output checks and profiles read it. */
#ifndef NEURON_HOST_LEDGER_H
#define NEURON_HOST_LEDGER_H

#include <stdint.h>

namespace neuron_host {

struct TensorImpl;

// Uses of element accessors during the call in progress: of read-only
// ones, and of writable ones (each use of which counts as a write: it
// returns a reference the kernel may write through).
extern uint64_t element_reads_counted;
extern uint64_t element_writes_counted;

// Records a use of a writable accessor on element of tensor, whose writes
// are tracked (tensor.tracks_writes).
void record_element_write(const TensorImpl &tensor, const void *element);

} // namespace neuron_host

#endif
