/* relu and its gradient on the eight GPSIMD cores: each core takes its
 * share of the elements, moves it through TCM in chunks and writes it
 * straight into the output, get_dst_tensor() (mandatory in multicore
 * builds, where only TCM accessors are supported). */
#include <stddef.h>
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

static const size_t chunk = 512; // floats per buffer

/* Core i owns [count * i / cores, count * (i + 1) / cores): every element
 * exactly once, whether or not the core count divides count. */
static void share(size_t count, size_t *begin, size_t *end)
{
    size_t cpu = get_cpu_id();
    size_t cpus = get_cpu_count();
    *begin = count * cpu / cpus;
    *end = count * (cpu + 1) / cpus;
}

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    size_t begin, end;
    share(t_in.numel(), &begin, &end);
    torch::Tensor t_out = get_dst_tensor();
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (!buffer) {
        printf("relu_forward: no TCM for the chunk buffer\n");
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

torch::Tensor relu_backward(const torch::Tensor &t_grad, const torch::Tensor &t_in)
{
    size_t begin, end;
    share(t_in.numel(), &begin, &end);
    torch::Tensor t_out = get_dst_tensor();
    float *grad = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    float *in = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (!grad || !in) {
        printf("relu_backward: no TCM for the chunk buffers\n");
        torch::neuron::tcm_free(grad);
        torch::neuron::tcm_free(in);
        return t_out;
    }
    auto grad_access = t_grad.tcm_accessor();
    auto in_access = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (size_t i = begin; i < end; i += chunk) {
        size_t n = end - i < chunk ? end - i : chunk;
        grad_access.tensor_to_tcm<float>(grad, i, n);
        in_access.tensor_to_tcm<float>(in, i, n);
        for (size_t j = 0; j < n; j++)
            grad[j] = in[j] > 0.0f ? grad[j] : 0.0f;
        out.tcm_to_tensor<float>(grad, i, n);
    }
    torch::neuron::tcm_free(grad);
    torch::neuron::tcm_free(in);
    return t_out;
}
