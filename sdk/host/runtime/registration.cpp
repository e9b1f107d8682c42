/* registration.cpp - register_funcs, as the device library's: it reads the
 * table the generated wrapper.cpp defines. */
#include <stdio.h>

#include "neuron/host_abi.h"
#include "neuron/wrapper_api.h"
#include "runtime.h"

namespace {

// The device's loader rejects libraries with this many functions or more.
const int function_limit = 0x8000;
// The developer guide allows this many functions in a library (and one
// custom-op library per model).
const int documented_function_limit = 10;

int register_funcs(void (*callback)(void *context, int index, const char *name), void *context,
                   char *error)
{
    int count = get_func_cnt();
    if (count < 0 || count >= function_limit) {
        snprintf(error, CUSTOMOP_HOST_ERROR_SIZE, "get_func_cnt() returned %d (0 to %d expected)", count,
                 function_limit - 1);
        return -1;
    }
    if (count > documented_function_limit) {
        snprintf(error, CUSTOMOP_HOST_ERROR_SIZE,
                 "the library registers %d functions, but the device documents at most %d in a library (and one "
                 "custom-op library per model)", count, documented_function_limit);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        const char *name = get_func_name(i);
        if (!name || !get_func_ptr(i)) {
            snprintf(error, CUSTOMOP_HOST_ERROR_SIZE, "get_func_%s(%d) returned NULL", name ? "ptr" : "name", i);
            return -1;
        }
        callback(context, i, name);
    }
    return count;
}

} // namespace

CUSTOMOP_HOST_EXPORT int customop_host_register(void (*callback)(void *context, int index, const char *name), void *context,
                           char error[CUSTOMOP_HOST_ERROR_SIZE])
{
    error[0] = '\0';
    return register_funcs(callback, context, error);
}
