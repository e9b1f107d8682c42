// WARNING: AUTO GENERATED DO NOT EDIT
#include "neuron/wrapper_api.h"

at::Tensor eleven(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);

void eleven_wrapper() {
    customop_setup(true);
    at::Tensor output = eleven(customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor(), customop_next_tensor());
    customop_return_tensor(output);
    customop_cleanup();
    if (switched_stack)
        switchBack();
}

int eleven_stack_switch() {
    return switch_stack_or_call_wrapper((uint32_t)eleven_wrapper);
}

int get_func_cnt() { return 1; }

char const* get_func_name(int idx) {
    switch (idx) {
        case 0: return "eleven";
        default: return "error";
    }
}

wrapper_fn get_func_ptr(int idx) {
    switch (idx) {
        case 0: return eleven_stack_switch;
        default: return 0;
    }
}
