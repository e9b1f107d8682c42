/* host_only_warnings.cpp - code the 32-bit device compiles without a
 * warning, on which a 64-bit host warns; test_compile_errors.sh checks that
 * these stay warnings, each with a note saying why. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>

at::Tensor host_only_warnings(const at::Tensor &x)
{
    size_t count = static_cast<size_t>(x.numel());
    printf("%u elements\n", count);                   // -Wformat: size_t is unsigned int on the device
    uint32_t address = 0;
    void *pointer = (void *)address;                  // a 32-bit integer fills a 32-bit pointer
    int *typed = (int *)address;
    uint32_t narrow{count};                           // no narrowing when size_t is 32 bits
    uint32_t all_ones = ~0UL;                         // ~0UL fits 32 bits on the device
    int64_t signed_count = -1;
    printf("%d %d %u %u %d\n", pointer == nullptr, typed == nullptr, narrow, all_ones,
           signed_count < count);                     // gcc's -Wsign-compare: int64_t is long long there
    return torch::mul(x, 1);
}
