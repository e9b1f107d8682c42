/* neuron/wrapper_api.h - what the generated wrapper.cpp calls: the argument
 * marshalling, the stack switch and the registration table. */
#ifndef NEURON_WRAPPER_API_H
#define NEURON_WRAPPER_API_H

#include <stdint.h>

#include <torch/torch.h>
#include "stack_switch.hpp"

typedef int (*wrapper_fn)();

// Starts an invocation: rewinds the argument cursor and forgets an earlier
// get_dst_tensor().
void (customop_setup)(bool has_return);
// The next argument, from one forward-only cursor over at most 10.
at::Tensor (customop_next_tensor)();
// The next argument, a 1-element tensor, as a Scalar.
at::Scalar (customop_next_scalar)();
// The next argument's bytes as an int, float or long long (no dtype check).
int (customop_next_int)();
float (customop_next_float)();
long long (customop_next_longlong)();
// Copies the kernel's result into the output, unless get_dst_tensor() was
// called; the dtypes must be equal.
void customop_return_tensor(at::Tensor &result);
// Ends the invocation (the device flushes stdout here).
void customop_cleanup();

// The generated wrapper pulls the kernel's arguments inside one call,
// kernel(customop_next_tensor(), customop_next_int(), ...), and the device's
// compiler evaluates them left to right, so the k-th pull in the text reads
// argument k.  g++ evaluates them right to left.  So on the host each pull
// carries its place in the text (__COUNTER__, counted from the
// customop_setup before it) and reads the argument the device would.
void customop_host_setup(bool has_return, int counter);
at::Tensor customop_host_next_tensor(int counter);
at::Scalar customop_host_next_scalar(int counter);
int customop_host_next_int(int counter);
float customop_host_next_float(int counter);
long long customop_host_next_longlong(int counter);
#define customop_setup(has_return) customop_host_setup(has_return, __COUNTER__)
#define customop_next_tensor() customop_host_next_tensor(__COUNTER__)
#define customop_next_scalar() customop_host_next_scalar(__COUNTER__)
#define customop_next_int() customop_host_next_int(__COUNTER__)
#define customop_next_float() customop_host_next_float(__COUNTER__)
#define customop_next_longlong() customop_host_next_longlong(__COUNTER__)

// The registration table wrapper.cpp defines and register_funcs reads.
int get_func_cnt();
char const *get_func_name(int idx);
wrapper_fn get_func_ptr(int idx);

#endif
