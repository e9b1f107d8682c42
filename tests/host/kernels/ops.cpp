/* ops.cpp - element-wise ops, factories and dtypes, for test_ops.sh:
 * float_ops(x, which) and int_ops(x, which) return op number `which`. */
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

at::Tensor float_ops(const at::Tensor &x, int which)
{
    at::Tensor zero = torch::zeros(x.sizes(), torch::TensorOptions().dtype(torch::kFloat));
    switch (which) {
    case 0: return torch::abs(x);
    case 1: return torch::ceil(x);
    case 2: return torch::floor(x);
    case 3: return torch::clamp(x, -1, 2);
    case 4: return torch::pow(x, 2);
    case 5: return torch::add(x, x, 2);
    case 6: return torch::sub(x, 1);
    case 7: return torch::div(x, 2);
    case 8: return torch::log2(torch::full(x.sizes(), 8.0, torch::kFloat));
    case 9: return torch::add(zero, torch::full(x.sizes(), 1.0 / 3, torch::kHalf));
    case 10: return torch::add(zero, torch::full(x.sizes(), 1.0 / 3, torch::kBFloat16));
    case 11: {
        at::Tensor out = get_dst_tensor();
        torch::mul_out(out, x, x);
        return out;
    }
    case 12: {
        at::Tensor identity = torch::eye(x.size(0), torch::kInt);
        auto element = identity.accessor<int32_t, 2>();
        return torch::add(zero, element[1][1] + element[0][1]);
    }
    case 13: return torch::add(torch::sin(zero), torch::exp(zero));
    case 14: {
        at::Tensor integers = torch::ones(x.sizes(), torch::kInt);
        torch::div_out(integers, x, 2); // Float can't go into Int
        return x;
    }
    }
    return x;
}

at::Tensor int_ops(const at::Tensor &x, int which)
{
    switch (which) {
    case 0: return torch::bitwise_and(x, 6);
    case 1: return torch::bitwise_or(x, torch::ones(x.sizes(), torch::kInt));
    case 2: return torch::bitwise_not(x);
    case 3: return torch::abs(x);
    case 4: return torch::mul(x, x);
    case 5: return torch::pow(x, 3);
    }
    return x;
}
