/* torch/torch.h - the kernel-side tensor API of the device (a port of
 * PyTorch 1.12's c10), emulated on the host.  Kernels use the at:: and
 * torch:: names. */
#ifndef TORCH_TORCH_H
#define TORCH_TORCH_H

// The device's torch.h brings in assert, and the documented examples use it.
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "neuron/host/array_ref.h"
#include "neuron/host/coherence.h"
#include "neuron/host/functions.h"
#include "neuron/host/scalar.h"
#include "neuron/host/scalar_type.h"
#include "neuron/host/tensor.h"
#include "neuron/host/tensor_options.h"

namespace at {
using c10::BFloat16;
using c10::Half;
using c10::kBFloat16;
using c10::kByte;
using c10::kChar;
using c10::kFloat;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kShort;
using c10::dtype;
} // namespace at

namespace torch {
using namespace at;

namespace neuron {
// Allocates n bytes of the core's 16 KiB TCM (data RAM) pool, in 64-byte
// aligned blocks; NULL when the pool cannot give them.  Writing past the n
// bytes is caught when the block is freed or the op ends.
void *tcm_malloc(size_t n);
// Gives a tcm_malloc block back; tcm_free(NULL) does nothing.  Any other
// pointer, or a block freed already, stops the op.
void tcm_free(void *pointer);
} // namespace neuron
} // namespace torch

#endif
