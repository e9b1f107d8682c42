/* custom_op.cpp - kernels that use the device runtime API of custom_op.h,
 * right and with one bug each, for tests/run/test_custom_op.sh.  x is a
 * float tensor; each kernel writes the whole output unless its bug is not
 * to.  The first two split the work into SHARES shares, one per core
 * (get_cpu_count(), which is 8 even in a single-core build: a single-core
 * build gives -DSHARES=1).
 *   memcpy_relu(x)       relu through data RAM with neuron_memcpy, any core count; right
 *   translate_relu(x)    relu reading and writing through neuron_translate, 8 cores; right
 *   q7_copy(x)           copies x through Q7PtrType::operator[]; right
 *   q7_partial(x)        the same, leaving the last element unwritten
 *   untranslated(x)      reads x's HBM address as a pointer
 *   stale(x)             uses a translated pointer after 4 more translations
 *   stale_q7(x)          writes through a translated pointer while reading
 *                        through Q7PtrType::operator[], which translates too
 *   translate_past(x)    reads one element past x through a translated pointer
 *   memcpy_past(x)       copies 32 bytes from 16 bytes before x's end
 *   memcpy_before(x)     copies from 64 bytes before x's start
 *   memcpy_stack(x)      copies into a local array, not data RAM
 *   dataram(x)           exhausts data RAM and asks for its largest free block
 *   hbm_limit(x)         fills the HBM scratch, asks one byte more, frees
 *   hbm_leak(x)          leaves an HBM allocation at its end
 *   hbm_twice(x)         frees an HBM allocation twice
 *   tcm_before(x)        tensor_to_tcm from element i - 75 with i = 0
 *   translate_made(x)    returns 2 * x from a tensor it made and wrote through
 *                        neuron_translate; right */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include "custom_op.h"
#include "neuron/neuron-utils.hpp"

namespace {

#ifndef SHARES
#define SHARES get_cpu_count()
#endif

const uint32_t chunk = 256; // floats per data RAM buffer

// This core's share of count elements: [*begin, *end).
void share(size_t count, size_t *begin, size_t *end)
{
    size_t cpu = get_cpu_id(), cpus = SHARES;
    *begin = count * cpu / cpus;
    *end = count * (cpu + 1) / cpus;
}

float relu(float v)
{
    return v > 0.0f ? v : 0.0f;
}

} // namespace

torch::Tensor memcpy_relu(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    uint64_t from = x.q7_data_ptr().hbm_addr, to = out.q7_data_ptr().hbm_addr;
    void *local;
    if (neuron_dataram_allocate(chunk * sizeof(float), &local, 64) != 0)
        return out;
    float *buffer = static_cast<float *>(local);
    size_t begin, end;
    share(static_cast<size_t>(x.numel()), &begin, &end);
    for (size_t i = begin; i < end; i += chunk) {
        uint32_t n = static_cast<uint32_t>(end - i < chunk ? end - i : chunk);
        neuron_memcpy(buffer, from + i * sizeof(float), n * sizeof(float));
        for (uint32_t j = 0; j < n; j++)
            buffer[j] = relu(buffer[j]);
        neuron_memcpy(to + i * sizeof(float), buffer, n * sizeof(float));
    }
    neuron_dataram_deallocate(buffer);
    return out;
}

torch::Tensor translate_relu(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    void *ctx = neuron_translate_ctx();
    uint64_t from = x.q7_data_ptr().hbm_addr, to = out.q7_data_ptr().hbm_addr;
    size_t begin, end;
    share(static_cast<size_t>(x.numel()), &begin, &end);
    for (size_t i = begin; i < end; i += chunk) {
        size_t n = end - i < chunk ? end - i : chunk;
        const float *in = static_cast<const float *>(neuron_translate(ctx, from + i * sizeof(float)));
        float *result = static_cast<float *>(neuron_translate(ctx, to + i * sizeof(float)));
        for (size_t j = 0; j < n; j++)
            result[j] = relu(in[j]);
    }
    return out;
}

torch::Tensor q7_copy_until(const torch::Tensor &x, int64_t last)
{
    torch::Tensor out = get_dst_tensor();
    c10::Q7PtrType in = x.q7_data_ptr(), result = out.q7_data_ptr();
    for (int64_t i = 0; i < last; i++)
        result.operator[]<float>(i) = in.operator[]<float>(i);
    return out;
}

torch::Tensor q7_copy(const torch::Tensor &x)
{
    return q7_copy_until(x, x.numel());
}

torch::Tensor q7_partial(const torch::Tensor &x)
{
    return q7_copy_until(x, x.numel() - 1);
}

torch::Tensor untranslated(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    const float *wrong = reinterpret_cast<const float *>(x.q7_data_ptr().hbm_addr);
    out.fill_(wrong[0]);
    return out;
}

torch::Tensor stale(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    void *ctx = neuron_translate_ctx();
    uint64_t at = x.q7_data_ptr().hbm_addr;
    const float *first = static_cast<const float *>(neuron_translate(ctx, at));
    float sum = 0.0f;
    for (int i = 1; i <= 4; i++)
        sum += *static_cast<const float *>(neuron_translate(ctx, at + 4 * static_cast<unsigned>(i)));
    out.fill_(sum + first[0]);
    return out;
}

torch::Tensor stale_q7(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    float *result = static_cast<float *>(neuron_translate(neuron_translate_ctx(), out.q7_data_ptr().hbm_addr));
    c10::Q7PtrType in = x.q7_data_ptr();
    for (int64_t i = 0; i < x.numel(); i++)
        result[i] = in.operator[]<float>(i);
    return out;
}

torch::Tensor translate_past(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    const float *in = static_cast<const float *>(neuron_translate(neuron_translate_ctx(), x.q7_data_ptr().hbm_addr));
    float sum = 0.0f;
    for (int64_t i = 0; i <= x.numel(); i++)
        sum += in[i];
    out.fill_(sum);
    return out;
}

torch::Tensor memcpy_at(const torch::Tensor &x, int64_t offset, uint32_t bytes)
{
    torch::Tensor out = get_dst_tensor();
    void *local;
    neuron_dataram_allocate(64, &local, 64);
    neuron_memcpy(local, x.q7_data_ptr().hbm_addr + static_cast<uint64_t>(offset), bytes);
    out.fill_(static_cast<float *>(local)[0]);
    neuron_dataram_deallocate(local);
    return out;
}

torch::Tensor memcpy_past(const torch::Tensor &x)
{
    return memcpy_at(x, x.numel() * 4 - 16, 32);
}

torch::Tensor memcpy_before(const torch::Tensor &x)
{
    return memcpy_at(x, -64, 16);
}

torch::Tensor memcpy_stack(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    float local[4];
    neuron_memcpy(local, x.q7_data_ptr().hbm_addr, sizeof local);
    out.fill_(local[0]);
    return out;
}

torch::Tensor dataram(const torch::Tensor &)
{
    torch::Tensor out = get_dst_tensor();
    unsigned largest = 0;
    neuron_dataram_max_free_space(&largest, 64);
    printf("free at first: %u\n", largest);
    void *small, *big, *more;
    int got_small = neuron_dataram_allocate(100, &small, 64);
    neuron_dataram_max_free_space(&largest, 64);
    printf("100 bytes: %d, then %u free\n", got_small, largest);
    neuron_dataram_max_free_space(&largest, 4096);
    printf("aligned to 4096: %u free\n", largest);
    int got_big = neuron_dataram_allocate(largest, &big, 4096);
    printf("%u bytes aligned to 4096: %d, aligned: %d\n", largest, got_big,
           static_cast<int>(reinterpret_cast<uintptr_t>(big) % 4096 == 0));
    int got_more = neuron_dataram_allocate(8192, &more, 64);
    printf("8192 more: %d, %s\n", got_more, more ? "not NULL" : "NULL");
    neuron_dataram_max_free_space(&largest, 64);
    printf("then %u free\n", largest);
    void *block = torch::neuron::tcm_malloc(64);
    printf("tcm_malloc shares the pool: %s\n", block ? "a block" : "NULL");
    torch::neuron::tcm_free(block);
    neuron_dataram_deallocate(big);
    neuron_dataram_deallocate(small);
    neuron_dataram_max_free_space(&largest, 64);
    printf("all freed: %u free\n", largest);
    out.fill_(1.0f);
    return out;
}

torch::Tensor hbm_limit(const torch::Tensor &)
{
    torch::Tensor out = get_dst_tensor();
    uint64_t whole, one, again;
    int got_whole = neuron_hbm_allocate(64u << 20, &whole);
    int got_one = neuron_hbm_allocate(1, &one);
    unsigned size = 0;
    int sized = neuron_hbm_get_alloc_size(whole, &size);
    printf("64 MiB: %d (size %d: %u), one byte more: %d\n", got_whole, sized, size, got_one);
    neuron_hbm_deallocate(whole);
    int got_again = neuron_hbm_allocate(4096, &again, 4096);
    printf("after freeing: %d, aligned: %d, size of the freed one: %d\n", got_again,
           static_cast<int>(again % 4096 == 0), neuron_hbm_get_alloc_size(whole, &size));
    neuron_hbm_deallocate(again);
    out.fill_(1.0f);
    return out;
}

torch::Tensor hbm_leak(const torch::Tensor &)
{
    torch::Tensor out = get_dst_tensor();
    uint64_t kept;
    neuron_hbm_allocate(4096, &kept);
    out.fill_(1.0f);
    return out;
}

torch::Tensor hbm_twice(const torch::Tensor &)
{
    torch::Tensor out = get_dst_tensor();
    uint64_t block;
    neuron_hbm_allocate(100, &block);
    neuron_hbm_deallocate(block);
    neuron_hbm_deallocate(block);
    out.fill_(1.0f);
    return out;
}

torch::Tensor tcm_before(const torch::Tensor &x)
{
    torch::Tensor out = get_dst_tensor();
    size_t n = static_cast<size_t>(x.numel()), i = 0;
    float *buffer = static_cast<float *>(torch::neuron::tcm_malloc(n * sizeof(float)));
    x.tcm_accessor().tensor_to_tcm<float>(buffer, i - 75, n);
    out.tcm_accessor().tcm_to_tensor<float>(buffer, 0, n);
    torch::neuron::tcm_free(buffer);
    return out;
}

torch::Tensor translate_made(const torch::Tensor &x)
{
    torch::Tensor made = torch::empty({x.numel()}, torch::kFloat);
    void *ctx = neuron_translate_ctx();
    float *result = static_cast<float *>(neuron_translate(ctx, made.q7_data_ptr().hbm_addr));
    const float *in = static_cast<const float *>(neuron_translate(ctx, x.q7_data_ptr().hbm_addr));
    for (int64_t i = 0; i < x.numel(); i++)
        result[i] = 2.0f * in[i];
    return made;
}
