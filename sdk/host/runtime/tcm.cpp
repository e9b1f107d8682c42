/* tcm.cpp - the core's 16 KiB TCM (data RAM) pool: tcm_malloc and tcm_free,
 * the stream accessors' buffers, and tcm_accessor's copies. */
#include <stdint.h>
#include <string.h>

#include "neuron/host/accessors.h"
#include "neuron/host/violation.h"
#include "elements.h"
#include "runtime.h"
#include "torch/torch.h"

namespace neuron_host {
namespace {

const size_t pool_size = 16 * 1024;
const size_t block_size = 64;
const size_t block_count = pool_size / block_size;
const size_t stream_buffer_size = 4096;

struct Pool {
    alignas(block_size) unsigned char memory[pool_size];
    // For the first block of each allocation, its length in blocks; 0 for
    // free blocks and the rest of an allocation.
    uint16_t length[block_count];
    bool used[block_count];
    // The run that made the allocation, so a violation can give back what
    // the abandoned kernel still held.
    uint32_t run[block_count];
    uint32_t current_run;
};

Pool pool;

void *allocate(size_t bytes)
{
    size_t blocks = bytes == 0 ? 1 : (bytes + block_size - 1) / block_size;
    if (bytes > pool_size)
        return nullptr;
    for (size_t start = 0; start + blocks <= block_count; start++) {
        size_t free_run = 0;
        while (free_run < blocks && !pool.used[start + free_run])
            free_run++;
        if (free_run < blocks) {
            start += free_run;
            continue;
        }
        for (size_t i = 0; i < blocks; i++)
            pool.used[start + i] = true;
        pool.length[start] = static_cast<uint16_t>(blocks);
        pool.run[start] = pool.current_run;
        return pool.memory + start * block_size;
    }
    return nullptr;
}

void release(size_t start)
{
    for (size_t i = 0; i < pool.length[start]; i++)
        pool.used[start + i] = false;
    pool.length[start] = 0;
}

size_t free_bytes()
{
    size_t count = 0;
    for (size_t i = 0; i < block_count; i++)
        count += pool.used[i] ? 0 : 1;
    return count * block_size;
}

} // namespace

void tcm_begin_run()
{
    pool.current_run++;
}

void tcm_release_run()
{
    for (size_t i = 0; i < block_count; i++)
        if (pool.length[i] && pool.run[i] == pool.current_run)
            release(i);
}

void *stream_buffer_take(const char *accessor)
{
    void *buffer = allocate(stream_buffer_size);
    if (!buffer)
        violation("%s: the TCM pool is exhausted: each stream accessor takes %zu bytes of the core's %zu-byte pool, "
                  "and %zu bytes are free", accessor, stream_buffer_size, pool_size, free_bytes());
    return buffer;
}

void stream_buffer_give_back(void *buffer)
{
    torch::neuron::tcm_free(buffer);
}

void tcm_copy(const TensorImpl &tensor, void *tcm, size_t offset, size_t count, size_t element_size, bool to_tcm)
{
    const char *what = to_tcm ? "tensor_to_tcm" : "tcm_to_tensor";
    size_t tensor_bytes = tensor.byte_size();
    size_t tensor_elements = tensor_bytes / element_size;
    if (offset > tensor_elements || count > tensor_elements - offset)
        violation("%s: elements [%zu, %zu) are outside the tensor, which holds %zu elements of %zu bytes", what, offset,
                  offset + count, tensor_elements, element_size);
    if (count > 0 && !tcm)
        violation("%s: the TCM pointer is NULL (did tcm_malloc fail?)", what);
    char *element = static_cast<char *>(tensor.data) + offset * element_size;
    if (to_tcm)
        memmove(tcm, element, count * element_size);
    else
        memmove(element, tcm, count * element_size);
}

} // namespace neuron_host

namespace torch {
namespace neuron {

void *tcm_malloc(size_t n)
{
    return neuron_host::allocate(n);
}

void tcm_free(void *pointer)
{
    using namespace neuron_host;
    if (!pointer)
        return;
    uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    uintptr_t base = reinterpret_cast<uintptr_t>(pool.memory);
    size_t start = (address - base) / block_size;
    if (address < base || address >= base + pool_size || (address - base) % block_size != 0 || !pool.length[start])
        violation("tcm_free: %p is not a block from tcm_malloc, or was freed already", pointer);
    release(start);
}

} // namespace neuron
} // namespace torch
