/* neuron_utils.cpp - get_cpu_id, get_cpu_count and the core id of the link. */
#include <stdint.h>

#include "neuron/host_abi.h"
#include "neuron/neuron-utils.hpp"
#include "runtime.h"

// Defined by the core_cpuI.o or core_single.o the library was linked with.
extern "C" const int customop_host_core_of_link;

CUSTOMOP_HOST_EXPORT int customop_host_linked_core(void)
{
    return customop_host_core_of_link;
}

uint32_t get_cpu_id()
{
    return static_cast<uint32_t>(neuron_host::core_id());
}

uint32_t get_cpu_count()
{
    return 8;
}

namespace neuron_host {

int core_id()
{
    return customop_host_core_of_link < 0 ? 0 : customop_host_core_of_link;
}

bool multicore_build()
{
    return customop_host_core_of_link >= 0;
}

} // namespace neuron_host
