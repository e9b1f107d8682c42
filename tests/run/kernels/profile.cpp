/* profile.cpp - kernels whose accesses are known exactly, for
 * tests/run/test_profile.sh: relu of a 1-D float tensor into
 * get_dst_tensor(), each through one way of access.
 *   element_relu(x)  single-core: x[i] read once, out[i] written once
 *   stream_relu(x)   single-core: a read stream and a write stream
 *   tcm_relu(x)      single-core: chunks of 256 floats through TCM
 *   rows_skewed(x)   multicore, [rows, columns]: rows / 8 rows a core, and
 *                    the last core the remainder too */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

torch::Tensor element_relu(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) {
        float value = in[i];
        to[i] = value > 0.0f ? value : 0.0f;
    }
    return out;
}

torch::Tensor stream_relu(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    auto in = x.read_stream_accessor<float>();
    auto to = out.write_stream_accessor<float>();
    for (int64_t i = 0; i < x.numel(); i++) {
        float value = in.read();
        to.write(value > 0.0f ? value : 0.0f);
    }
    return out;
}

torch::Tensor tcm_relu(const torch::Tensor &x)
{
    const size_t chunk = 256;
    torch::Tensor out = get_dst_tensor();
    size_t count = static_cast<size_t>(x.numel());
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    for (size_t i = 0; i < count; i += chunk) {
        size_t n = count - i < chunk ? count - i : chunk;
        x.tcm_accessor().tensor_to_tcm<float>(buffer, i, n);
        for (size_t j = 0; j < n; j++)
            buffer[j] = buffer[j] > 0.0f ? buffer[j] : 0.0f;
        out.tcm_accessor().tcm_to_tensor<float>(buffer, i, n);
    }
    torch::neuron::tcm_free(buffer);
    return out;
}

torch::Tensor rows_skewed(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    size_t rows = static_cast<size_t>(x.size(0)), columns = static_cast<size_t>(x.size(1));
    size_t cpu = get_cpu_id(), share = rows / 8;
    size_t first = share * cpu, end = cpu == 7 ? rows : first + share;
    float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    for (size_t r = first; r < end; r++) {
        x.tcm_accessor().tensor_to_tcm<float>(row, r * columns, columns);
        for (size_t j = 0; j < columns; j++)
            row[j] = row[j] > 0.0f ? row[j] : 0.0f;
        out.tcm_accessor().tcm_to_tensor<float>(row, r * columns, columns);
    }
    torch::neuron::tcm_free(row);
    return out;
}
