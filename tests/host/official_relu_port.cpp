// A port of the official multicore relu sample (aws-neuron-samples,
// customop_mlp/neuron-multicore/relu.cpp) as device-facts.md describes it,
// its partition bug kept: the last core's share is enlarged before it is
// used as the multiplier of the offset, so when 8 does not divide numel the
// last core starts past its share and runs off the end of the tensor.
// Schema: my_ops::relu(Tensor x) -> Tensor
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

torch::Tensor relu(const torch::Tensor &t_in)
{
    const size_t chunk = 1024;
    size_t count = t_in.numel();
    uint32_t cpu = get_cpu_id();
    uint32_t cpus = get_cpu_count();
    torch::Tensor t_out = get_dst_tensor();

    size_t partition = count / cpus;
    if (cpu == cpus - 1)
        partition += count % cpus; // the bug: enlarged before the offset below
    size_t offset = partition * cpu;

    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (size_t i = 0; i < partition; i += chunk) {
        size_t n = partition - i < chunk ? partition - i : chunk;
        in.tensor_to_tcm<float>(buffer, offset + i, n);
        for (size_t j = 0; j < n; j++)
            buffer[j] = buffer[j] > 0.0f ? buffer[j] : 0.0f;
        out.tcm_to_tensor<float>(buffer, offset + i, n);
    }
    torch::neuron::tcm_free(buffer);
    return t_out;
}
