/* ledger.h - the core ledger: what this core does to tensor memory during a
 * call (not part of the SDK's API).
 *
 * The runtime's code that touches tensor data on the kernel's behalf (the
 * TCM copies, the streams, the element-wise ops, the factories, the copy of
 * the result) reports here; the element accessors report through
 * neuron/host/ledger.h.  At the end of the call the ledger is handed to the
 * caller in customop_host_call.ledger: counts always, and, when the caller
 * asks (CUSTOMOP_HOST_RECORD_COVERAGE), the output elements this core wrote
 * and read.  No other room records accesses. */
#ifndef CUSTOMOP_HOST_LEDGER_H
#define CUSTOMOP_HOST_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "neuron/host_abi.h"

namespace neuron_host {

struct TensorImpl;

// run.cpp, around each call: starts a new ledger for call, and hands it
// over in call->ledger (sets and all) when the call has run.
void ledger_begin(customop_host_call *call);
void ledger_end(customop_host_call *call);

// marshal.cpp and factories.cpp: a tensor the kernel gets or makes.  Over
// the output's memory, its element writes are the output's; made by
// empty(), it gets a set of its own, which customop_return_tensor maps onto
// the output if the kernel returns it.
void ledger_track(TensorImpl &tensor, bool made_empty);
// tensor.cpp: a tensor goes away; element writes into it still pending go
// into the ledger first.
void ledger_forget(const TensorImpl &tensor);

// bytes of tensor's memory at `at`, read or written by the runtime for the
// kernel.
void ledger_read(const TensorImpl &tensor, const void *at, size_t bytes);
void ledger_write(const TensorImpl &tensor, const void *at, size_t bytes);

// tcm.cpp: one tensor_to_tcm (to_tcm) or tcm_to_tensor of bytes.
void ledger_tcm_copy(bool to_tcm, size_t bytes);
// streams.cpp: a stream accessor on tensor ended (closed or destroyed)
// with `end` the first element it did not reach.
void ledger_stream(const TensorImpl &tensor, const void *end, size_t element_size, bool writes, bool buffered);
// elementwise.cpp, factories.cpp, tensor.cpp: an element-wise op (or a
// fill) over elements, reading and writing bytes.
void ledger_elementwise(int64_t elements, size_t bytes);
// marshal.cpp: customop_return_tensor copied result into the output.
void ledger_result_copied(const TensorImpl &result);

} // namespace neuron_host

#endif
