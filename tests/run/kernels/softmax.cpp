/* softmax.cpp - a row softmax with a temperature, softmax(x / temperature)
 * of each row of a 2-D float tensor, in the three ways a kernel grows up,
 * for tests/run/test_profile.sh (the profile and its hints, and the exact
 * output of each):
 *   softmax_element(x, t)  single-core: element accessors, three passes over
 *                          each row (largest, sum, result), into a tensor
 *                          of its own that it returns
 *   softmax_t(x, t)        single-core: each row copied into TCM once,
 *                          computed there and copied out, into a tensor of
 *                          its own that it returns
 *   softmax_multicore(x, t) 8 cores: as softmax_t, core i taking rows
 *                          [rows * i / 8, rows * (i + 1) / 8), straight into
 *                          get_dst_tensor()
 *   stream_five(x)         single-core: copies x through five read streams
 *                          at once (the fifth has no TCM buffer) */
#include <math.h>
#include <stddef.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

namespace {

// softmax(row / temperature) of columns floats, in place.
void softmax_in_place(float *row, size_t columns, float temperature)
{
    float largest = -INFINITY, sum = 0.0f;
    for (size_t j = 0; j < columns; j++)
        largest = fmaxf(largest, row[j] / temperature);
    for (size_t j = 0; j < columns; j++) {
        row[j] = expf(row[j] / temperature - largest);
        sum += row[j];
    }
    for (size_t j = 0; j < columns; j++)
        row[j] /= sum;
}

// Rows [first, last) of x through one TCM row into out.
void softmax_rows(const torch::Tensor &x, torch::Tensor &out, size_t first, size_t last, float temperature)
{
    size_t columns = static_cast<size_t>(x.size(1));
    float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    for (size_t r = first; r < last; r++) {
        x.tcm_accessor().tensor_to_tcm<float>(row, r * columns, columns);
        softmax_in_place(row, columns, temperature);
        out.tcm_accessor().tcm_to_tensor<float>(row, r * columns, columns);
    }
    torch::neuron::tcm_free(row);
}

} // namespace

torch::Tensor softmax_element(const torch::Tensor &x, float temperature)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 2>();
    auto to = out.accessor<float, 2>();
    for (int64_t r = 0; r < x.size(0); r++) {
        float largest = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < x.size(1); j++)
            largest = fmaxf(largest, in[r][j] / temperature);
        for (int64_t j = 0; j < x.size(1); j++)
            sum += expf(in[r][j] / temperature - largest);
        for (int64_t j = 0; j < x.size(1); j++)
            to[r][j] = expf(in[r][j] / temperature - largest) / sum;
    }
    return out;
}

torch::Tensor softmax_t(const torch::Tensor &x, float temperature)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    softmax_rows(x, out, 0, static_cast<size_t>(x.size(0)), temperature);
    return out;
}

torch::Tensor softmax_multicore(const torch::Tensor &x, float temperature)
{
    torch::Tensor out = get_dst_tensor();
    size_t rows = static_cast<size_t>(x.size(0)), cpu = get_cpu_id(), cpus = get_cpu_count();
    softmax_rows(x, out, rows * cpu / cpus, rows * (cpu + 1) / cpus, temperature);
    return out;
}

torch::Tensor stream_five(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    auto a = x.read_stream_accessor<float>();
    auto b = x.read_stream_accessor<float>();
    auto c = x.read_stream_accessor<float>();
    auto d = x.read_stream_accessor<float>();
    auto e = x.read_stream_accessor<float>();
    auto to = out.write_stream_accessor<float>();
    for (int64_t i = 0; i < x.numel(); i++) {
        float value = a.read();
        b.read();
        c.read();
        d.read();
        e.read();
        to.write(value);
    }
    return out;
}
