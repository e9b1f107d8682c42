/* coverage.cpp - kernels for the output checks (tests/run/test_coverage.sh):
 * each buggy one has exactly one bug, the others none.
 *
 * Multicore ops (a row-wise relu through TCM, each core its share of the
 * rows of a [rows, columns] float tensor):
 *   rows(Tensor x)              right: core i takes rows [rows*i/8, rows*(i+1)/8)
 *   rows_remainder_lost(x)      each core takes rows/8 rows: the remainder is lost
 *   rows_overlap(x)             each core takes one row more than its share
 *   rows_all_write_row_0(x)     right, but every core also writes row 0
 *   rows_read_neighbour(x)      right, but core 0 reads back core 1's first row
 * Single-core ops (written whole in different ways, or, for
 * half_returned, not):
 *   half_returned(x)            empty(), the first half written, returned
 *   zeros_returned(x), add_out(x), tcm_returned(x), fill_returned(x),
 *   sum_returned(x), element_out(x), evens_then_odds(x) (and, from
 *   profile.cpp beside it, stream_relu)
 *   evens_only(x)               every other element, scattered writes */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

namespace {

// relu of rows [first, end) of x into the same rows of out, a row at a time.
void relu_rows(const torch::Tensor &x, torch::Tensor &out, int64_t first, int64_t end)
{
    size_t columns = static_cast<size_t>(x.size(1));
    float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    auto in = x.tcm_accessor();
    auto to = out.tcm_accessor();
    for (int64_t r = first; r < end; r++) {
        in.tensor_to_tcm<float>(row, static_cast<size_t>(r) * columns, columns);
        for (size_t j = 0; j < columns; j++)
            row[j] = row[j] > 0.0f ? row[j] : 0.0f;
        to.tcm_to_tensor<float>(row, static_cast<size_t>(r) * columns, columns);
    }
    torch::neuron::tcm_free(row);
}

int64_t cpu()
{
    return static_cast<int64_t>(get_cpu_id());
}

} // namespace

torch::Tensor rows(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    int64_t count = x.size(0);
    relu_rows(x, out, count * cpu() / 8, count * (cpu() + 1) / 8);
    return out;
}

torch::Tensor rows_remainder_lost(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    int64_t share = x.size(0) / 8;
    relu_rows(x, out, share * cpu(), share * (cpu() + 1));
    return out;
}

torch::Tensor rows_overlap(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    int64_t count = x.size(0);
    int64_t end = count * (cpu() + 1) / 8 + 1;
    relu_rows(x, out, count * cpu() / 8, end < count ? end : count);
    return out;
}

torch::Tensor rows_all_write_row_0(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    int64_t count = x.size(0);
    relu_rows(x, out, count * cpu() / 8, count * (cpu() + 1) / 8);
    relu_rows(x, out, 0, 1);
    return out;
}

torch::Tensor rows_read_neighbour(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    int64_t count = x.size(0);
    relu_rows(x, out, count * cpu() / 8, count * (cpu() + 1) / 8);
    if (cpu() == 0) {
        size_t columns = static_cast<size_t>(x.size(1));
        float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
        out.tcm_accessor().tensor_to_tcm<float>(row, static_cast<size_t>(count / 8) * columns, columns);
        torch::neuron::tcm_free(row);
    }
    return out;
}

torch::Tensor half_returned(const torch::Tensor &x)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel() / 2; i++)
        to[i] = in[i];
    return out;
}

torch::Tensor zeros_returned(const torch::Tensor &x)
{
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++)
        if (in[i] > 0.0f)
            to[i] = in[i];
    return out;
}

torch::Tensor add_out(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    torch::add_out(out, x, 1);
    return out;
}

torch::Tensor tcm_returned(const torch::Tensor &x)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    size_t count = static_cast<size_t>(x.numel());
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * count));
    x.tcm_accessor().tensor_to_tcm<float>(block, 0, count);
    out.tcm_accessor().tcm_to_tensor<float>(block, 0, count);
    torch::neuron::tcm_free(block);
    return out;
}

torch::Tensor fill_returned(const torch::Tensor &x)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    out.fill_(2);
    return out;
}

torch::Tensor sum_returned(const torch::Tensor &x)
{
    return torch::add(x, x);
}

torch::Tensor element_out(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t i = x.numel(); i-- > 0;)
        to[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return out;
}

// Every other element, then (when both) the rest: scattered single writes,
// which the ledger keeps in a bitmap.
static torch::Tensor alternate(const torch::Tensor &x, bool both)
{
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto to = out.accessor<float, 1>();
    for (int64_t first = 0; first < (both ? 2 : 1); first++)
        for (int64_t i = first; i < x.numel(); i += 2)
            to[i] = in[i];
    return out;
}

torch::Tensor evens_then_odds(const torch::Tensor &x)
{
    return alternate(x, true);
}

torch::Tensor evens_only(const torch::Tensor &x)
{
    return alternate(x, false);
}
