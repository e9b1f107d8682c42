/* relu: a single-core op that reads and writes elements through accessor.
 * Schema: my_ops::relu(Tensor x) -> Tensor   (x: a 1-D float tensor)
 * Build:  build-custom-op --target host --name relu \
 *             --op 'my_ops::relu(Tensor x) -> Tensor' examples/relu/relu.cpp */
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu(const torch::Tensor &t_in)
{
    int64_t count = t_in.numel();
    torch::Tensor t_out = torch::zeros({count}, torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < count; i++)
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return t_out;
}
