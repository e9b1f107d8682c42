/* neuron/neuron-utils.hpp - the multicore (SPMD) API and the output tensor. */
#ifndef NEURON_NEURON_UTILS_HPP
#define NEURON_NEURON_UTILS_HPP

#include <stdint.h>

#include <torch/torch.h>

// The cpu_id of the processor the caller is on, in [0, get_cpu_count()):
// fixed when the core library was linked; 0 in a single-core build.
uint32_t get_cpu_id();
// Always 8, even in a single-core build.
uint32_t get_cpu_count();
// A writable tensor over the op's output; customop_return_tensor then copies
// nothing.  Mandatory in multicore builds: each core writes its share.
at::Tensor get_dst_tensor();

#endif
