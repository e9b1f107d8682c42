/* relu on the eight GPSIMD cores: each core copies its share of the input
 * into TCM in chunks, applies relu there and writes the chunk straight into
 * the output (get_dst_tensor(), mandatory in multicore builds).
 * Schema: my_ops::relu(Tensor x) -> Tensor   (x: a float tensor, any shape)
 * Build:  build-custom-op --target host --multicore --name relu \
 *             --op 'my_ops::relu(Tensor x) -> Tensor' examples/relu_multicore/relu.cpp */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

torch::Tensor relu(const torch::Tensor &t_in)
{
    const size_t chunk = 1024; // floats per TCM buffer: 4 KiB of the 16 KiB pool
    size_t count = t_in.numel();
    size_t cpu = get_cpu_id();
    size_t cpus = get_cpu_count();
    // Core i owns [count * i / cpus, count * (i + 1) / cpus): the shares
    // cover every element exactly once, whether or not cpus divides count.
    size_t begin = count * cpu / cpus;
    size_t end = count * (cpu + 1) / cpus;

    torch::Tensor t_out = get_dst_tensor();
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (!buffer) {
        printf("relu: core %u: no TCM for the chunk buffer\n", static_cast<unsigned>(cpu));
        return t_out;
    }
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (size_t i = begin; i < end; i += chunk) {
        size_t n = end - i < chunk ? end - i : chunk;
        in.tensor_to_tcm<float>(buffer, i, n);
        for (size_t j = 0; j < n; j++)
            buffer[j] = buffer[j] > 0.0f ? buffer[j] : 0.0f;
        out.tcm_to_tensor<float>(buffer, i, n);
    }
    torch::neuron::tcm_free(buffer);
    return t_out;
}
