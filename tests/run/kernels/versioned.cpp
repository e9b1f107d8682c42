/* versioned.cpp - a kernel that says which build it is, for the tests of the ops record.
 * Schema: my_ops::scaled(Tensor x, float b) -> Tensor
 * Writes VERSION (1 unless -DVERSION=N) and b into elements 0 and 1 of the
 * output and x * b into the others, each core its share. */
#include <torch/torch.h>
#include "neuron/host_abi.h"
#include "neuron/neuron-utils.hpp"

#ifndef VERSION
#define VERSION 1
#endif

torch::Tensor scaled(const torch::Tensor &x, float b)
{
    size_t count = x.numel();
    size_t cpu = get_cpu_id(), cpus = customop_host_linked_core() < 0 ? 1 : get_cpu_count();
    torch::Tensor out = get_dst_tensor();
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float)));
    auto in = x.tcm_accessor();
    auto to = out.tcm_accessor();
    for (size_t i = count * cpu / cpus; i < count * (cpu + 1) / cpus; i++) {
        in.tensor_to_tcm<float>(buffer, i, 1);
        *buffer = i == 0 ? VERSION : i == 1 ? b : *buffer * b;
        to.tcm_to_tensor<float>(buffer, i, 1);
    }
    torch::neuron::tcm_free(buffer);
    return out;
}
