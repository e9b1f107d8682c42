/* gdb_probe.cpp - kernels for test_gdb.sh to stop in and print from: scale
 * (eight cores, TCM) and probe (one core, every accessor).  The test breaks
 * at the lines marked "stop here". */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

torch::Tensor scale(const torch::Tensor &x, const torch::Scalar &a)
{
    uint32_t cpu = get_cpu_id();
    torch::Tensor out = get_dst_tensor();
    auto tcm = x.tcm_accessor();
    float first = 0.0f;
    tcm.tensor_to_tcm<float>(&first, 0, 1);
    if (cpu == 7) // stop here: scale (core 7 alone writes, so the output is unwritten here whatever order the cores run in)
        out.fill_(a.toFloat() * first);
    return out;
}

torch::Tensor probe(const torch::Tensor &x)
{
    auto in = x.accessor<float, 2>();
    auto row = in[1];
    auto stream = x.read_stream_accessor<float>();
    float first = stream.read();
    torch::Tensor half = torch::ones({3}, torch::TensorOptions(torch::kHalf));
    torch::Tensor undefined;
    auto written = half.write_stream_accessor<c10::Half>();
    written.close();
    (void)row;
    (void)first;
    return x; // stop here: probe
}
