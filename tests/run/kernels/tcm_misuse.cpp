/* tcm_misuse.cpp - kernels with one TCM bug each, and their right
 * versions, for tests/run/test_tcm.sh.  Single-core; each writes its whole
 * output (get_dst_tensor), so that the bug is the only finding.
 *   row_max(x)           [rows, 1024]: out[r][j] = max of row r; right
 *   row_max_past(x)      the same, reading one element past its row buffer
 *   prefix_sums(x)       [1024]: running sums through TCM; right
 *   prefix_before(x)     the same, reading the element before the buffer
 *   tile_far(x)          [n]: a 16-float tile indexed with the row's offset
 *   halo_before(x)       writes 32 bytes before a 100-byte block
 *   slack_past(x)        writes the byte just past a 100-byte block
 *   write_after_free(x)  writes a block after tcm_free
 *   column_sums(x)       [rows, 16] -> [16]: sums in a TCM accumulator; right
 *   column_sums_unzeroed(x)  the same, without zeroing the accumulator
 *   edge(x, bytes, index, writes)  reads (or writes) element index of a
 *                        block of bytes: floats when 4 divides bytes, else
 *                        bytes; right for an index inside the block
 *   scale_inclusive(x)   [1000]: for (j = 0; j <= n; j++) b[j] = 2 * b[j]
 *                        over a 4000-byte block, one element too many */
#include <stddef.h>
#include <stdint.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

namespace {

// relu of x into the output through a block of n floats, as every kernel
// here ends: the output is written whole.
torch::Tensor copy_out(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    size_t count = static_cast<size_t>(x.numel());
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * 64));
    for (size_t i = 0; i < count; i += 64) {
        size_t n = count - i < 64 ? count - i : 64;
        x.tcm_accessor().tensor_to_tcm<float>(block, i, n);
        out.tcm_accessor().tcm_to_tensor<float>(block, i, n);
    }
    torch::neuron::tcm_free(block);
    return out;
}

torch::Tensor row_max_until(const torch::Tensor &x, size_t last)
{
    torch::Tensor out = get_dst_tensor();
    size_t rows = static_cast<size_t>(x.size(0)), columns = static_cast<size_t>(x.size(1));
    float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    for (size_t r = 0; r < rows; r++) {
        x.tcm_accessor().tensor_to_tcm<float>(row, r * columns, columns);
        float largest = row[0];
        for (size_t j = 1; j <= last; j++)
            largest = row[j] > largest ? row[j] : largest;
        for (size_t j = 0; j < columns; j++)
            row[j] = largest;
        out.tcm_accessor().tcm_to_tensor<float>(row, r * columns, columns);
    }
    torch::neuron::tcm_free(row);
    return out;
}

torch::Tensor prefix_from(const torch::Tensor &x, size_t first)
{
    torch::Tensor out = get_dst_tensor();
    size_t count = static_cast<size_t>(x.numel());
    float *sums = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * count));
    x.tcm_accessor().tensor_to_tcm<float>(sums, 0, count);
    for (size_t j = first; j < count; j++)
        sums[j] += sums[static_cast<ptrdiff_t>(j) - 1];
    out.tcm_accessor().tcm_to_tensor<float>(sums, 0, count);
    torch::neuron::tcm_free(sums);
    return out;
}

torch::Tensor column_sums_of(const torch::Tensor &x, bool zeroed)
{
    torch::Tensor out = get_dst_tensor();
    size_t rows = static_cast<size_t>(x.size(0)), columns = static_cast<size_t>(x.size(1));
    float *sums = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    float *row = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * columns));
    for (size_t j = 0; zeroed && j < columns; j++)
        sums[j] = 0.0f;
    for (size_t r = 0; r < rows; r++) {
        x.tcm_accessor().tensor_to_tcm<float>(row, r * columns, columns);
        for (size_t j = 0; j < columns; j++)
            sums[j] += row[j];
    }
    out.tcm_accessor().tcm_to_tensor<float>(sums, 0, columns);
    torch::neuron::tcm_free(row);
    torch::neuron::tcm_free(sums);
    return out;
}

volatile float sink;
volatile char sink_byte;

} // namespace

torch::Tensor row_max(const torch::Tensor &x)
{
    return row_max_until(x, static_cast<size_t>(x.size(1)) - 1);
}

torch::Tensor row_max_past(const torch::Tensor &x)
{
    return row_max_until(x, static_cast<size_t>(x.size(1)));
}

torch::Tensor prefix_sums(const torch::Tensor &x)
{
    return prefix_from(x, 1);
}

torch::Tensor prefix_before(const torch::Tensor &x)
{
    return prefix_from(x, 0);
}

torch::Tensor tile_far(const torch::Tensor &x)
{
    float *tile = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * 16));
    for (size_t r = 0; r < 2; r++)
        for (size_t j = 0; j < 16; j++)
            tile[r * 1024 + j] = 0.0f; // the tile holds one row of 16, not rows of 1024
    torch::neuron::tcm_free(tile);
    return copy_out(x);
}

torch::Tensor halo_before(const torch::Tensor &x)
{
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(100));
    for (ptrdiff_t j = -8; j < 25; j++)
        block[j] = 1.0f;
    torch::neuron::tcm_free(block);
    return copy_out(x);
}

torch::Tensor slack_past(const torch::Tensor &x)
{
    // volatile: byte by byte, not a memset (which the runtime checks itself).
    volatile char *block = static_cast<char *>(torch::neuron::tcm_malloc(100));
    for (size_t j = 0; j <= 100; j++)
        block[j] = 1;
    torch::neuron::tcm_free(const_cast<char *>(block));
    return copy_out(x);
}

torch::Tensor write_after_free(const torch::Tensor &x)
{
    float *block = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * 16));
    torch::neuron::tcm_free(block);
    block[4] = 1.0f;
    sink = block[0];
    return copy_out(x);
}

torch::Tensor column_sums(const torch::Tensor &x)
{
    return column_sums_of(x, true);
}

torch::Tensor column_sums_unzeroed(const torch::Tensor &x)
{
    return column_sums_of(x, false);
}

torch::Tensor edge(const torch::Tensor &x, int bytes, int index, int writes)
{
    char *block = static_cast<char *>(torch::neuron::tcm_malloc(static_cast<size_t>(bytes)));
    if (bytes % 4 == 0) {
        volatile float *element = reinterpret_cast<float *>(block) + index;
        if (writes)
            *element = 1.0f;
        else
            sink = *element;
    } else {
        volatile char *element = block + index;
        if (writes)
            *element = 1;
        else
            sink_byte = *element;
    }
    torch::neuron::tcm_free(block);
    return copy_out(x);
}

torch::Tensor scale_inclusive(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    size_t n = static_cast<size_t>(x.numel());
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * n));
    x.tcm_accessor().tensor_to_tcm<float>(buf, 0, n);
    for (size_t j = 0; j <= n; j++)
        buf[j] = 2.0f * buf[j];
    out.tcm_accessor().tcm_to_tensor<float>(buf, 0, n);
    torch::neuron::tcm_free(buf);
    return out;
}
