/* axpby: n steps of the blend y <- a*x + b*y, an exponential moving average
 * of y toward x when a + b == 1 (a = 0.25, b = 0.75, n = 4 keeps 0.75^4 of y).
 * It takes every argument kind: two tensors, a Scalar, a float and an int.
 * Schema: my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor
 *         (x, y: float tensors of one shape)
 * Build:  build-custom-op --target host --name axpby \
 *             --op 'my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor' \
 *             examples/axpby/axpby.cpp */
#include <torch/torch.h>

torch::Tensor axpby(const torch::Tensor &x, const torch::Tensor &y, const torch::Scalar &a, float b, int n)
{
    torch::Tensor ax = torch::mul(x, a);   // the same every step
    torch::Tensor result = torch::mul(y, 1); // a copy: y belongs to the host
    for (int step = 0; step < n; step++)
        torch::add_out(result, ax, result, b); // result = a*x + b*result
    return result;
}
