/* relu on the eight GPSIMD cores, written with the device runtime API of
 * custom_op.h: each core copies its share of the input from HBM into a data
 * RAM buffer with neuron_memcpy, applies relu there, and copies the chunk
 * back into the output's HBM (get_dst_tensor(), mandatory in multicore
 * builds).  A tensor's HBM address comes from q7_data_ptr(); it is an
 * address, not a pointer: only neuron_memcpy and neuron_translate take it.
 * Schema: my_ops::relu(Tensor x) -> Tensor   (x: a float tensor, any shape)
 * Build:  build-custom-op --target host --multicore --name relu \
 *             --op 'my_ops::relu(Tensor x) -> Tensor' examples/relu_memcpy/relu.cpp
 * What the emulator does with each call: docs/reference/custom_op_h.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include "custom_op.h"
#include "neuron/neuron-utils.hpp"

torch::Tensor relu(const torch::Tensor &t_in)
{
    const uint32_t chunk = 1024; // floats per data RAM buffer: 4 KiB of the 16 KiB
    size_t count = t_in.numel();
    size_t cpu = get_cpu_id();
    size_t cpus = get_cpu_count();
    // Core i owns [count * i / cpus, count * (i + 1) / cpus): the shares
    // cover every element exactly once, whether or not cpus divides count.
    size_t begin = count * cpu / cpus;
    size_t end = count * (cpu + 1) / cpus;

    torch::Tensor t_out = get_dst_tensor();
    uint64_t in = t_in.q7_data_ptr().hbm_addr;
    uint64_t out = t_out.q7_data_ptr().hbm_addr;
    void *local = nullptr;
    if (neuron_dataram_allocate(chunk * sizeof(float), &local, 64) != 0) {
        printf("relu: core %u: no data RAM for the chunk buffer\n", static_cast<unsigned>(cpu));
        return t_out;
    }
    float *buffer = static_cast<float *>(local);
    for (size_t i = begin; i < end; i += chunk) {
        uint32_t n = static_cast<uint32_t>(end - i < chunk ? end - i : chunk);
        neuron_memcpy(buffer, in + i * sizeof(float), n * sizeof(float));
        for (uint32_t j = 0; j < n; j++)
            buffer[j] = buffer[j] > 0.0f ? buffer[j] : 0.0f;
        neuron_memcpy(out + i * sizeof(float), buffer, n * sizeof(float));
    }
    neuron_dataram_deallocate(buffer);
    return t_out;
}
