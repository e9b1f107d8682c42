/* ledger.cpp - kernels that measure what the core ledger and the TCM checks
 * cost (bench/ledger_cases.py).  Single-core.
 *   element_store(x)     out[i] = x[i] through element accessors, into
 *                        get_dst_tensor(): one recorded write per element
 *   tcm_pairs(x, n)      n tcm_malloc/tcm_free pairs of 4 KiB, one float
 *                        written into each; then x copied into the output
 *   tcm_copies(x, n)     n tensor_to_tcm copies of 1024 floats; then the same */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

namespace {

void copy_through_tcm(const torch::Tensor &x, torch::Tensor &out)
{
    size_t count = static_cast<size_t>(x.numel());
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(4096));
    for (size_t i = 0; i < count; i += 1024) {
        size_t n = count - i < 1024 ? count - i : 1024;
        x.tcm_accessor().tensor_to_tcm<float>(block, i, n);
        out.tcm_accessor().tcm_to_tensor<float>(block, i, n);
    }
    torch::neuron::tcm_free(block);
}

} // namespace

torch::Tensor element_store(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++)
        to[i] = in[i];
    return out;
}

torch::Tensor tcm_pairs(const torch::Tensor &x, int n)
{
    torch::Tensor out = get_dst_tensor();
    for (int k = 0; k < n; k++) {
        volatile float *block = static_cast<float *>(torch::neuron::tcm_malloc(4096));
        block[k % 1024] = 1.0f;
        torch::neuron::tcm_free(const_cast<float *>(block));
    }
    copy_through_tcm(x, out);
    return out;
}

torch::Tensor tcm_copies(const torch::Tensor &x, int n)
{
    torch::Tensor out = get_dst_tensor();
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(4096));
    for (int k = 0; k < n; k++)
        x.tcm_accessor().tensor_to_tcm<float>(block, 0, 1024);
    torch::neuron::tcm_free(block);
    copy_through_tcm(x, out);
    return out;
}
