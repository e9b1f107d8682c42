/* sanitize.cpp - kernels for test_sanitize.sh: each bug the sanitizers find
 * in one op, and a correct op that must run without a word from them.
 * The tests check the file:line of each bug: keep the lines where they are
 * or update the test. */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

// Correct: each core's share of relu through a TCM block, as
// examples/relu_multicore does, with a local array on the core stack too.
// cores: 1 or 8, as the build.
torch::Tensor relu(const torch::Tensor &x, int cores)
{
    size_t count = x.numel(), cpu = get_cpu_id(), cpus = static_cast<size_t>(cores);
    size_t begin = count * cpu / cpus, end = count * (cpu + 1) / cpus;
    torch::Tensor out = get_dst_tensor();
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * 64));
    float local[16] = {0};
    auto in = x.tcm_accessor();
    auto to = out.tcm_accessor();
    for (size_t i = begin; i < end; i += 64) {
        size_t n = end - i < 64 ? end - i : 64;
        in.tensor_to_tcm<float>(block, i, n);
        for (size_t j = 0; j < n; j++) {
            local[j % 16] = block[j];
            block[j] = local[j % 16] > 0.0f ? local[j % 16] : 0.0f;
        }
        to.tcm_to_tensor<float>(block, i, n);
    }
    torch::neuron::tcm_free(block);
    return out;
}

// A local array written one past its end.
torch::Tensor stack_overrun(const torch::Tensor &x)
{
    volatile int local[8];
    int n = static_cast<int>(x.numel()); // 9 in the test
    for (int i = 0; i < n; i++)
        local[i] = i;
    torch::Tensor out = get_dst_tensor();
    out.fill_(local[0]);
    return out;
}

// A sum that passes INT32_MAX.
torch::Tensor signed_overflow(const torch::Tensor &x)
{
    auto in = x.accessor<int32_t, 1>();
    int32_t sum = 0;
    for (int64_t i = 0; i < x.size(0); i++)
        sum += in[i];
    torch::Tensor out = get_dst_tensor();
    out.fill_(sum);
    return out;
}

// A TCM block of n floats read at [n].
torch::Tensor tcm_over_read(const torch::Tensor &x)
{
    size_t n = static_cast<size_t>(x.numel());
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * n));
    x.tcm_accessor().tensor_to_tcm<float>(block, 0, n);
    float largest = block[0];
    for (size_t i = 1; i <= n; i++)
        largest = block[i] > largest ? block[i] : largest;
    torch::neuron::tcm_free(block);
    torch::Tensor out = get_dst_tensor();
    out.fill_(largest);
    return out;
}

// A TCM block of n floats read at [n] to [n + 3]: four reports (for n of
// at most 12, the reads stay inside the block's 64 bytes).
torch::Tensor tcm_over_read_four(const torch::Tensor &x)
{
    size_t n = static_cast<size_t>(x.numel());
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * n));
    x.tcm_accessor().tensor_to_tcm<float>(block, 0, n);
    float largest = block[0];
    for (size_t i = 1; i < n + 4; i++)
        largest = block[i] > largest ? block[i] : largest;
    torch::neuron::tcm_free(block);
    torch::Tensor out = get_dst_tensor();
    out.fill_(largest);
    return out;
}

// A store through a null pointer: a fault, which abandons the kernel where
// it was, on the emulated stack ASan was told of.
torch::Tensor null_write(const torch::Tensor &x)
{
    volatile float *nowhere = nullptr;
    if (x.numel() > 0)
        *nowhere = 1.0f;
    return get_dst_tensor();
}
