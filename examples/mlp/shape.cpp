/* The shape functions of the MLP's relu ops: they run on the host, take the
 * ops' arguments and return a tensor of the output's sizes and dtype
 * (the data is never read).  NEURON_LIBRARY registers my_ops::relu_forward
 * and my_ops::relu_backward, each with the compute function that runs it
 * on the GPSIMD cores. */
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_forward_shape(torch::Tensor t_in)
{
    return torch::empty(t_in.sizes(), torch::kFloat);
}

torch::Tensor relu_backward_shape(torch::Tensor t_grad, torch::Tensor t_in)
{
    (void)t_in;
    return torch::empty(t_grad.sizes(), torch::kFloat);
}

NEURON_LIBRARY(my_ops, m)
{
    m.def("relu_forward", &relu_forward_shape, "relu_forward");
    m.def("relu_backward", &relu_backward_shape, "relu_backward");
}
