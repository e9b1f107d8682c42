/* limits.cpp - kernels at and past the device's documented limits, for
 * test_limits.sh. */
#include <stdint.h>
#include <string.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"

// Returns the output as the host passed it.
at::Tensor pass(const at::Tensor &)
{
    return get_dst_tensor();
}

// Returns a tensor of the shape case `which` names.
at::Tensor returns_shape(const at::Tensor &, int which)
{
    switch (which) {
    case 0: return torch::zeros({1, 1, 1, 1, 65536}, torch::kFloat);
    case 1: return torch::zeros({1, 1, 1, 1, 1, 1, 1, 1, 1}, torch::kFloat);
    }
    return torch::zeros({1, 1, 1, 1, 65535}, torch::kFloat);
}

// Receives, makes and returns 64-bit tensors.
at::Tensor wide(const at::Tensor &x)
{
    at::Tensor zero = torch::zeros(x.sizes(), torch::kLong);
    return torch::add(x, zero);
}

// Options without a dtype.
at::Tensor no_dtype(const at::Tensor &x)
{
    return torch::zeros(x.sizes(), torch::TensorOptions());
}

// TCM misuse, case `which`, on core `core` only (every core of a
// single-core build is core 0).
at::Tensor tcm(const at::Tensor &x, int which, int core)
{
    at::Tensor out = get_dst_tensor();
    if (static_cast<int>(get_cpu_id()) != core)
        return out;
    switch (which) {
    case 0: { // one byte past a 4096-byte block
        char *block = static_cast<char *>(torch::neuron::tcm_malloc(4096));
        memset(block, 1, 4097);
        torch::neuron::tcm_free(block);
        break;
    }
    case 1: { // into the 64-byte rounding of a 100-byte block
        char *block = static_cast<char *>(torch::neuron::tcm_malloc(100));
        block[100] = 1;
        break;
    }
    case 2: { // a pointer into a block
        char *block = static_cast<char *>(torch::neuron::tcm_malloc(100));
        torch::neuron::tcm_free(block + 16);
        break;
    }
    case 3: { // a double free
        void *block = torch::neuron::tcm_malloc(256);
        torch::neuron::tcm_free(block);
        torch::neuron::tcm_free(block);
        break;
    }
    case 4: { // not TCM at all
        char local[64];
        torch::neuron::tcm_free(local);
        break;
    }
    case 5: { // blocks not freed
        torch::neuron::tcm_malloc(4096);
        torch::neuron::tcm_malloc(100);
        break;
    }
    case 6: { // tensor_to_tcm of 5 floats into a 16-byte block
        float *block = static_cast<float *>(torch::neuron::tcm_malloc(16));
        x.tcm_accessor().tensor_to_tcm<float>(block, 0, 5);
        torch::neuron::tcm_free(block);
        break;
    }
    case 7: { // what fits: the whole block, and the whole pool after it
        char *block = static_cast<char *>(torch::neuron::tcm_malloc(4096));
        memset(block, 1, 4096);
        torch::neuron::tcm_free(block);
        block = static_cast<char *>(torch::neuron::tcm_malloc(16384));
        memset(block, 2, 16384);
        torch::neuron::tcm_free(block);
        break;
    }
    }
    return out;
}

// A stream accessor, which a multicore build does not support.
at::Tensor stream(const at::Tensor &x)
{
    auto reader = x.read_stream_accessor<float>();
    reader.read();
    return get_dst_tensor();
}

// Eleven functions in one library: the device documents at most 10.
#define FUNCTION(name) \
    at::Tensor name(const at::Tensor &) { return get_dst_tensor(); }
FUNCTION(f1)
FUNCTION(f2)
FUNCTION(f3)
FUNCTION(f4)
FUNCTION(f5)
FUNCTION(f6)
FUNCTION(f7)
FUNCTION(f8)
FUNCTION(f9)
FUNCTION(f10)
FUNCTION(f11)
