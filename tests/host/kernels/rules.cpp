/* rules.cpp - kernels that break a device rule, one op each, for
 * test_violations.sh; and kernels that show what the rules allow. */
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

// Five stream accessors need 20 KiB of the 16 KiB TCM pool: the fifth works
// without a buffer.
at::Tensor stream_exhaust(const at::Tensor &x)
{
    auto a = x.read_stream_accessor<float>();
    auto b = x.read_stream_accessor<float>();
    auto c = x.read_stream_accessor<float>();
    auto d = x.read_stream_accessor<float>();
    auto e = x.read_stream_accessor<float>();
    printf("five reads: %g\n", static_cast<double>(a.read() + b.read() + c.read() + d.read() + e.read()));
    return x;
}

// tcm_malloc returns NULL, never fails the op, when the pool cannot give.
at::Tensor tcm_pool(const at::Tensor &x)
{
    void *whole = torch::neuron::tcm_malloc(16384);
    printf("whole pool: %s\n", whole ? "ok" : "NULL");
    printf("one more byte: %s\n", torch::neuron::tcm_malloc(1) ? "ok" : "NULL");
    torch::neuron::tcm_free(whole);
    torch::neuron::tcm_free(nullptr);
    void *small = torch::neuron::tcm_malloc(1);
    void *next = torch::neuron::tcm_malloc(100);
    printf("blocks 64-byte aligned: %d\n", reinterpret_cast<uintptr_t>(small) % 64 == 0 &&
                                               reinterpret_cast<uintptr_t>(next) % 64 == 0);
    printf("past the pool: %s\n", torch::neuron::tcm_malloc(16384 - 64) ? "ok" : "NULL");
    torch::neuron::tcm_free(small);
    torch::neuron::tcm_free(next);
    // Four stream accessors fit exactly; a fifth buffer would not.
    auto a = x.read_stream_accessor<float>();
    auto b = x.read_stream_accessor<float>();
    auto c = x.read_stream_accessor<float>();
    auto d = x.read_stream_accessor<float>();
    printf("with four stream accessors: %s\n", torch::neuron::tcm_malloc(1) ? "ok" : "NULL");
    float sum = a.read() + b.read() + c.read() + d.read();
    printf("four reads of the first element: %g\n", static_cast<double>(sum));
    return x;
}

// A copy of x as the result, which a multicore build cannot return.
at::Tensor copy(const at::Tensor &x)
{
    return torch::mul(x, 1);
}

at::Tensor wrong_dtype(const at::Tensor &x)
{
    return torch::zeros(x.sizes(), torch::kInt);
}

at::Tensor accessor_dim(const at::Tensor &x)
{
    auto wrong = x.accessor<float, 2>();
    printf("not reached %f\n", static_cast<double>(wrong[0][0]));
    return x;
}

at::Tensor accessor_index(const at::Tensor &x)
{
    auto in = x.accessor<float, 1>();
    float sum = 0;
    for (int64_t i = 0; i <= x.numel(); i++) // one past the end
        sum += in[i];
    printf("not reached %f\n", static_cast<double>(sum));
    return x;
}

at::Tensor sizes_index(const at::Tensor &x)
{
    int64_t columns = x.sizes()[1]; // a 1-dimensional x has no sizes()[1]
    printf("not reached %lld\n", static_cast<long long>(columns));
    return x;
}

at::Tensor scale(const at::Tensor &x, const at::Scalar &a)
{
    return torch::mul(x, a);
}

at::Tensor add_mismatch(const at::Tensor &x, const at::Tensor &y)
{
    return torch::add(x, y);
}

at::Tensor eleven(const at::Tensor &a, const at::Tensor &, const at::Tensor &, const at::Tensor &,
                  const at::Tensor &, const at::Tensor &, const at::Tensor &, const at::Tensor &,
                  const at::Tensor &, const at::Tensor &, const at::Tensor &)
{
    return a;
}

// Every core says who it is; printf is routed to the host with the core id.
at::Tensor whoami(const at::Tensor &x)
{
    printf("core %u of %u\n", static_cast<unsigned>(get_cpu_id()), static_cast<unsigned>(get_cpu_count()));
    printf("via puts\n");
    putchar('!');
    putchar('\n');
    at::Tensor out = get_dst_tensor();
    if (get_cpu_id() == 0) {
        auto in = x.tcm_accessor();
        auto to = out.tcm_accessor();
        float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * x.numel()));
        in.tensor_to_tcm<float>(buffer, 0, x.numel());
        to.tcm_to_tensor<float>(buffer, 0, x.numel());
        torch::neuron::tcm_free(buffer);
    }
    return out;
}

// A stream or a TCM copy of a type other than the tensor's dtype takes its
// bytes as they are, with a warning (once per call); one of a type that is
// no device dtype (raw words) gives none.
at::Tensor element_types(const at::Tensor &x)
{
    auto as_float = x.read_stream_accessor<float>();
    printf("1 read as float: %g\n", static_cast<double>(as_float.read()));
    as_float.close();
    auto as_int = x.read_stream_accessor<int32_t>();
    printf("1 read as int32_t: %d\n", static_cast<int>(as_int.read()));
    as_int.close();
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(64));
    x.tcm_accessor().tensor_to_tcm<float>(block, 0, 2);
    x.tcm_accessor().tensor_to_tcm<float>(block, 0, 2);
    x.tcm_accessor().tensor_to_tcm<uint32_t>(reinterpret_cast<uint32_t *>(block), 0, 2);
    printf("2 copied as words: %u\n", static_cast<unsigned>(reinterpret_cast<uint32_t *>(block)[1]));
    torch::neuron::tcm_free(block);
    return x;
}
