/* relu and its gradient, one core, element by element through
 * accessor<float, 2>() (each access goes to HBM: simple, and the slowest
 * path).  The inputs are the MLP's activations: 2-D float tensors. */
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    int64_t rows = t_in.size(0);
    int64_t columns = t_in.size(1);
    torch::Tensor t_out = torch::zeros({rows, columns}, torch::kFloat);
    auto in = t_in.accessor<float, 2>();
    auto out = t_out.accessor<float, 2>();
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < columns; j++)
            out[i][j] = in[i][j] > 0.0f ? in[i][j] : 0.0f;
    return t_out;
}

/* The gradient flows where the forward input was positive. */
torch::Tensor relu_backward(const torch::Tensor &t_grad, const torch::Tensor &t_in)
{
    int64_t rows = t_in.size(0);
    int64_t columns = t_in.size(1);
    torch::Tensor t_out = torch::zeros({rows, columns}, torch::kFloat);
    auto grad = t_grad.accessor<float, 2>();
    auto in = t_in.accessor<float, 2>();
    auto out = t_out.accessor<float, 2>();
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < columns; j++)
            out[i][j] = in[i][j] > 0.0f ? grad[i][j] : 0.0f;
    return t_out;
}
