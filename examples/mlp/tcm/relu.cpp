/* relu and its gradient, one core, through the TCM: chunks of the inputs
 * are copied into buffers taken from the core's 16 KiB TCM pool, computed
 * there and copied into the result (tcm_accessor(), tensor_to_tcm,
 * tcm_to_tensor).  Any shape: the data is walked as a flat array. */
#include <stddef.h>
#include <stdio.h>
#include <torch/torch.h>

static const size_t chunk = 512; // floats per buffer: 2 KiB each, three buffers

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    size_t count = t_in.numel();
    torch::Tensor t_out = torch::empty({static_cast<int64_t>(count)}, torch::kFloat);
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (!buffer) {
        printf("relu_forward: no TCM for the chunk buffer\n");
        return t_out;
    }
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (size_t i = 0; i < count; i += chunk) {
        size_t n = count - i < chunk ? count - i : chunk;
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
    size_t count = t_in.numel();
    torch::Tensor t_out = torch::empty({static_cast<int64_t>(count)}, torch::kFloat);
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
    for (size_t i = 0; i < count; i += chunk) {
        size_t n = count - i < chunk ? count - i : chunk;
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
