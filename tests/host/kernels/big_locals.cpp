/* big_locals.cpp - a kernel with LOCALS bytes of locals that calls printf,
 * for test_stack.sh: it fits the core stack, overflows it, or runs on the
 * STACK_SIZE stack.  It returns get_dst_tensor(), or with RETURN_OWN a
 * tensor of its own. */
#include <stddef.h>
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"
#include "stack_switch.hpp"

#ifndef LOCALS
#define LOCALS 16384
#endif

at::Tensor big_locals(const at::Tensor &x)
{
    volatile unsigned char locals[LOCALS];
    // From the lowest address up: the first write past the stack's end is
    // the first one made.
    for (size_t i = 0; i < LOCALS; i++)
        locals[i] = static_cast<unsigned char>(i);
    unsigned sum = 0;
    for (size_t i = 0; i < LOCALS; i++)
        sum += locals[i];
    printf("%d bytes of locals, switched_stack %d, sum %u, quarter %g\n", LOCALS, switched_stack ? 1 : 0, sum,
           sum / 4.0);
    (void)x;
#ifdef RETURN_OWN
    return torch::full(x.sizes(), 7, torch::kFloat); // a tensor the kernel owns
#else
    return get_dst_tensor(); // left as the host passed it, on every core
#endif
}
