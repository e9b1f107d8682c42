/* marshal.cpp - the customop_* calls of the generated wrapper and
 * get_dst_tensor(): arguments in, result out. */
#include <string.h>
#include <memory>
#include <vector>

#include "neuron/host/violation.h"
#include "neuron/neuron-utils.hpp"
#include "neuron/wrapper_api.h"
#include "elements.h"
#include "ledger.h"
#include "runtime.h"

namespace neuron_host {
namespace {

// The device reads at most this many argument records.
const int argument_limit = 10;

struct MarshalState {
    int cursor;        // the next position, for pulls without a counter
    int setup_counter; // the __COUNTER__ of the wrapper's customop_setup
    bool wrote_output; // get_dst_tensor() was called
    const at::Tensor *returned; // what customop_return_tensor was given
};

// A pull without a counter takes the cursor's position.
const int no_counter = -1;

MarshalState state;

// A tensor over the host's memory: argument number (from 1), or the
// output (-1).  A 64-bit one gets the device's warning.
at::Tensor wrap(const customop_host_tensor &tensor, int number)
{
    std::vector<int64_t> sizes(tensor.sizes, tensor.sizes + tensor.rank);
    std::vector<int64_t> strides(tensor.strides, tensor.strides + tensor.rank);
    auto impl = std::make_shared<TensorImpl>(static_cast<c10::ScalarType>(tensor.dtype), sizes, strides, tensor.data,
                                             false);
    impl->argument = number;
    ledger_track(*impl, false);
    return TensorInternals::wrap(std::move(impl));
}

// The argument a pull reads; *number is its position counted from 1, as
// messages count them.
const customop_host_tensor &next_argument(const char *what, int counter, int *number)
{
    customop_host_call *call = current_call();
    if (!call)
        violation("%s called outside an op", what);
    bool counted = counter != no_counter && state.setup_counter != no_counter;
    int position = counted ? counter - state.setup_counter - 1 : state.cursor;
    state.cursor = position + 1;
    *number = position + 1;
    if (position < 0)
        violation("%s before customop_setup", what);
    if (position >= argument_limit)
        violation("%s: too many arguments: the device passes at most %d", what, argument_limit);
    if (position >= call->arg_count)
        violation("%s: argument %d requested, but the op was given %d", what, position + 1, call->arg_count);
    return call->args[position];
}

// next_int, next_float and next_longlong load bytes with no dtype check.
template <typename T> T next_bytes_as(const char *what, int counter, const char *type_name)
{
    int number;
    const customop_host_tensor &argument = next_argument(what, counter, &number);
    if (byte_count(argument) < sizeof(T))
        violation("%s: argument %d holds %zu bytes, but %s needs %zu", what, number, byte_count(argument),
                  type_name, sizeof(T));
    T value;
    memcpy(&value, argument.data, sizeof value);
    return value;
}

} // namespace

void marshal_reset()
{
    state.cursor = 0;
    state.setup_counter = no_counter;
    state.wrote_output = false;
    state.returned = nullptr;
}

const at::Tensor *marshal_returned_result()
{
    return state.returned;
}

} // namespace neuron_host

using namespace neuron_host;

void customop_host_setup(bool has_return, int counter)
{
    (void)has_return; // the generated wrapper always passes true
    marshal_reset();
    state.setup_counter = counter;
}

at::Tensor customop_host_next_tensor(int counter)
{
    int number;
    const customop_host_tensor &argument = next_argument("customop_next_tensor", counter, &number);
    if (argument.rank < 1)
        violation("customop_next_tensor: argument %d has rank 0: a tensor argument needs rank >= 1", number);
    if (argument.dtype == CUSTOMOP_HOST_INT64)
        warn_64_bit_tensor();
    return wrap(argument, number);
}

at::Scalar customop_host_next_scalar(int counter)
{
    int number;
    const customop_host_tensor &argument = next_argument("customop_next_scalar", counter, &number);
    int64_t count = element_count(argument);
    if (count > 1)
        violation("customop_next_scalar: Cannot create an at::Scalar. Argument has more than 1 element "
                  "(argument %d has %lld)", number, static_cast<long long>(count));
    if (count < 1)
        violation("customop_next_scalar: Cannot create an at::Scalar. Argument %d has no element", number);
    c10::ScalarType type = static_cast<c10::ScalarType>(argument.dtype);
    if (c10::isFloatingType(type))
        return at::Scalar(element_load_double(argument.data, type));
    return at::Scalar(element_load_integer(argument.data, type));
}

int customop_host_next_int(int counter)
{
    return next_bytes_as<int>("customop_next_int", counter, "an int");
}

float customop_host_next_float(int counter)
{
    return next_bytes_as<float>("customop_next_float", counter, "a float");
}

long long customop_host_next_longlong(int counter)
{
    return next_bytes_as<long long>("customop_next_longlong", counter, "a long long");
}

// The device's entry points, for code that calls them by name rather than
// through the generated wrapper: they pull in evaluation order.
void (customop_setup)(bool has_return)
{
    customop_host_setup(has_return, no_counter);
}

at::Tensor (customop_next_tensor)()
{
    return customop_host_next_tensor(no_counter);
}

at::Scalar (customop_next_scalar)()
{
    return customop_host_next_scalar(no_counter);
}

int (customop_next_int)()
{
    return customop_host_next_int(no_counter);
}

float (customop_next_float)()
{
    return customop_host_next_float(no_counter);
}

long long (customop_next_longlong)()
{
    return customop_host_next_longlong(no_counter);
}

void customop_return_tensor(at::Tensor &result)
{
    state.returned = &result;
    if (state.wrote_output)
        return;
    if (multicore_build())
        violation("customop_return_tensor: a multicore build must write its output through get_dst_tensor() "
                  "(each core writes its share; copying would overwrite the other cores' shares)");
    if (!result.defined())
        violation("customop_return_tensor: the kernel returned an undefined tensor");
    check_dimensions(result.sizes().data(), result.sizes().size(), "the returned tensor");
    customop_host_call *call = current_call();
    at::Tensor output = wrap(*call->output, -1);
    if (result.scalar_type() != output.scalar_type())
        violation("customop_return_tensor: the result's dtype is %s but the output's is %s: the returned tensor "
                  "must have the output's dtype", c10::toString(result.scalar_type()),
                  c10::toString(output.scalar_type()));
    if (result.numel() != output.numel())
        violation("customop_return_tensor: the result has %lld elements but the output has %lld",
                  static_cast<long long>(result.numel()), static_cast<long long>(output.numel()));
    const TensorImpl &from = TensorInternals::impl(result);
    const TensorImpl &to = TensorInternals::impl(output);
    size_t size = c10::elementSize(from.dtype);
    windows_sync(from.data, from.byte_size());
    windows_sync(to.data, to.byte_size());
    for (int64_t i = 0; i < from.numel; i++)
        memcpy(element_address(to, i), element_address(from, i), size);
    windows_refresh(to.data, to.byte_size());
    ledger_result_copied(from);
}

void customop_cleanup()
{
    // The device flushes stdout here; printf already went straight to the
    // host, so there is nothing left to send.
}

at::Tensor get_dst_tensor()
{
    customop_host_call *call = current_call();
    if (!call)
        violation("get_dst_tensor() called outside an op");
    state.wrote_output = true;
    if (call->output->dtype == CUSTOMOP_HOST_INT64)
        warn_64_bit_tensor();
    return wrap(*call->output, -1);
}
