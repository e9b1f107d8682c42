/* refused.cpp - what the device's compiler refuses, one case per -DCASE=N,
 * for test_compile_errors.sh. */
#include <torch/torch.h>

at::Tensor refused(const at::Tensor &x)
{
#if CASE == 1 // writing through the accessor of a const tensor
    auto element = x.accessor<float, 1>();
    element[0] = 1.0f;
#elif CASE == 2 // a write stream on a const tensor
    auto writer = x.write_stream_accessor<float>();
    writer.write(1.0f);
#elif CASE == 3 // factories without a dtype
    return torch::zeros({4});
#elif CASE == 4
    return torch::ones(x.sizes());
#elif CASE == 5
    return torch::empty(x.sizes());
#elif CASE == 6
    return torch::full(x.sizes(), 1.5);
#elif CASE == 7
    return torch::eye(3);
#elif CASE == 8
    return torch::eye(3, 4);
#elif CASE == 9 // a warning the device's -Werror makes an error
    int unused = 0;
#endif
    return x;
}
