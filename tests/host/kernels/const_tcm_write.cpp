/* const_tcm_write.cpp - must not compile: the TCM accessor of a const tensor
 * cannot write to it. */
#include <torch/torch.h>

at::Tensor write_input(const at::Tensor &x)
{
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(64));
    x.tcm_accessor().tcm_to_tensor<float>(buffer, 0, 1);
    torch::neuron::tcm_free(buffer);
    return x;
}
