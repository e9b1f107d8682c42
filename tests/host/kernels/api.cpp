/* api.cpp - the documented API, one call at a time, for test_api.sh:
 * api_float(x, which) and api_int(x, which) return case `which`.  Only
 * <torch/torch.h> and neuron-utils.hpp are included: assert comes with
 * torch.h, as in the documented examples. */
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

#include <type_traits>

// fill_ is declared as PyTorch declares it: Tensor& fill_(const Scalar&) const.
static_assert(std::is_same<decltype(std::declval<const at::Tensor &>().fill_(1)), at::Tensor &>::value,
              "fill_ returns at::Tensor&");

// The output, written in place (what the kernel returns is then not copied).
at::Tensor output()
{
    return get_dst_tensor();
}

at::Tensor api_float(const at::Tensor &x, int which)
{
    switch (which) {
    case 0: return torch::pow(2.0, x);
    case 1: { at::Tensor out = output(); torch::pow_out(out, 2, x); return out; }
    case 2: return output().fill_(2.5);
    case 3: return output().fill_(7); // an integer Scalar, converted to Float
    case 4: {
        // Every documented accessor type, by name.
        at::Tensor out = torch::empty(x.sizes(), torch::kFloat);
        torch::TensorAccessor<float, 1, true> in = x.accessor<float, 1>();
        torch::TensorReadStreamAccessor<float> reader = x.read_stream_accessor<float>();
        torch::TensorWriteStreamAccessor<float> writer = out.write_stream_accessor<float>();
        for (int64_t i = 0; i < x.numel(); i++)
            writer.write(reader.read() + in[i]);
        int closed = writer.close() + reader.close();
        at::TensorAccessor<float, 1, false> twice = out.accessor<float, 1>();
        at::Tensor ones = torch::ones(x.sizes(), torch::kFloat);
        torch::TensorTcmAccessor<true> from = static_cast<const at::Tensor &>(ones).tcm_accessor();
        torch::TensorTcmAccessor<false> to = ones.tcm_accessor();
        float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * x.numel()));
        from.tensor_to_tcm<float>(block, 0, x.numel());
        for (int64_t i = 0; i < x.numel(); i++)
            block[i] += twice[i] + static_cast<float>(closed);
        to.tcm_to_tensor<float>(block, 0, x.numel());
        torch::neuron::tcm_free(block);
        return torch::add(ones, 0.0);
    }
    case 5: assert(x.numel() > 0); return torch::mul(x, 1);
    case 6: assert(x.numel() == 0); return torch::mul(x, 1);
    case 7: {
        // The policy is COHERENT until set, and copies of a tensor share it.
        at::Tensor copy = x;
        int before = copy.get_accessor_coherence_policy() == torch::CoherencyEnforcer::COHERENT;
        x.set_accessor_coherence_policy(torch::CoherencyEnforcer::Policy::INCOHERENT_QUIET);
        int after = copy.get_accessor_coherence_policy() == torch::CoherencyEnforcer::INCOHERENT_QUIET;
        return output().fill_(before * 10 + after);
    }
    case 8: {
        // fill_ returns the tensor itself, as a torch::Tensor& a kernel may keep.
        at::Tensor out = output();
        torch::Tensor &filled = out.fill_(1.5);
        return &filled == &out ? filled : out.fill_(-1);
    }
    }
    return x;
}

at::Tensor api_int(const at::Tensor &x, int which)
{
    switch (which) {
    case 0: return torch::bitwise_and(6, x);
    case 1: return torch::bitwise_or(1, x);
    case 2: { at::Tensor out = output(); torch::bitwise_and_out(out, 6, x); return out; }
    case 3: { at::Tensor out = output(); torch::bitwise_or_out(out, 4294967301LL, x); return out; } // 2^32 + 5 as int32: 5
    case 4: return torch::bitwise_and(x, 6.9);                         // 6.9 cast to int32 is 6
    case 5: return torch::pow(2, x);
    case 6: { at::Tensor out = output(); torch::pow_out(out, 3, x); return out; }
    case 7: return torch::pow(2.5, x); // a floating base gives Float
    }
    return x;
}
