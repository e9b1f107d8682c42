/* neuron/wrapper_api.h - the least the generated wrapper.cpp needs in order
 * to be checked with `c++ -m32 -fsyntax-only`: the types and functions it
 * names, declared as the device SDK declares them.  No system header is
 * included so that the check runs without a 32-bit C++ library; -m32 because
 * the device is 32-bit and the launcher casts a function to uint32_t. */
#ifndef NEURON_WRAPPER_API_H
#define NEURON_WRAPPER_API_H

typedef __UINT32_TYPE__ uint32_t;

namespace at {
class Tensor {
public:
	Tensor();
	Tensor(const Tensor &other);
};
class Scalar {
public:
	Scalar();
	Scalar(const Scalar &other);
};
}

typedef int (*wrapper_fn)();

void customop_setup(bool has_return);
at::Tensor customop_next_tensor();
at::Scalar customop_next_scalar();
int customop_next_int();
float customop_next_float();
long long customop_next_longlong();
void customop_return_tensor(at::Tensor &result);
void customop_cleanup();

extern bool switched_stack;
/* The device jumps to it from inline assembly; the host target calls it. */
void switchBack();
int switch_stack_or_call_wrapper(uint32_t wrapper_fn_ptr, uint32_t stack_size = 4196);

int get_func_cnt();
char const *get_func_name(int idx);
wrapper_fn get_func_ptr(int idx);

#endif
