/* elementwise.cpp - the device's element-wise ops and their _out forms.
 * No broadcasting: operands, and the out tensor, must have equal shapes.
 * Dtypes promote as in PyTorch; integer results wrap, as on the device. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "elements.h"
#include "ledger.h"
#include "runtime.h"
#include "torch/torch.h"

namespace at {
namespace {

using neuron_host::TensorImpl;
using neuron_host::TensorInternals;
using neuron_host::violation;

const TensorImpl &impl_of(const Tensor &tensor)
{
    return TensorInternals::impl(tensor);
}

// The other operand of a binary op: a tensor, or a scalar.
struct Operand {
    const TensorImpl *tensor;
    Scalar scalar;

    double as_double(int64_t index) const
    {
        return tensor ? neuron_host::element_load_double(neuron_host::element_address(*tensor, index), tensor->dtype)
                      : scalar.toDouble();
    }
    int64_t as_integer(int64_t index) const
    {
        return tensor ? neuron_host::element_load_integer(neuron_host::element_address(*tensor, index), tensor->dtype)
                      : scalar.toLong();
    }
};

Operand tensor_operand(const Tensor &tensor)
{
    return Operand{&impl_of(tensor), Scalar()};
}

Operand scalar_operand(const Scalar &scalar)
{
    return Operand{nullptr, scalar};
}

// bitwise_and and bitwise_or cast a Scalar operand to the tensor's dtype
// first, as the device documents (300 becomes 44 for a kByte tensor).
Operand scalar_cast_to(const Scalar &scalar, const Tensor &tensor)
{
    ScalarType type = impl_of(tensor).dtype;
    if (c10::isFloatingType(type))
        return scalar_operand(scalar); // refused by the rule: bitwise ops need integers
    int64_t element = 0;
    if (scalar.isFloatingPoint())
        neuron_host::element_store_double(&element, type, scalar.toDouble());
    else
        neuron_host::element_store_integer(&element, type, scalar.toLong());
    return scalar_operand(Scalar(neuron_host::element_load_integer(&element, type)));
}

ScalarType promote(ScalarType a, ScalarType b)
{
    if (a == b)
        return a;
    bool a_floating = c10::isFloatingType(a);
    bool b_floating = c10::isFloatingType(b);
    if (a_floating && b_floating)
        return kFloat;
    if (a_floating || b_floating)
        return a_floating ? a : b;
    if ((a == kByte && b == kChar) || (a == kChar && b == kByte))
        return kShort;
    return c10::elementSize(a) >= c10::elementSize(b) ? a : b;
}

ScalarType promote(ScalarType self, const Operand &other)
{
    if (other.tensor)
        return promote(self, other.tensor->dtype);
    // A floating scalar makes an integer tensor's result Float; otherwise
    // the tensor's dtype wins, as PyTorch's wrapped numbers do.
    return other.scalar.isFloatingPoint() && !c10::isFloatingType(self) ? kFloat : self;
}

// Makes the result tensor, or checks the one given to an _out form.
Tensor prepare_out(const char *name, Tensor *out, const TensorImpl &self, ScalarType computed)
{
    if (!out)
        return neuron_host::make_tensor(computed, IntArrayRef(self.sizes), name);
    const TensorImpl &given = impl_of(*out);
    if (given.sizes != self.sizes)
        violation("%s_out: out has shape %s but the result has shape %s: the device neither broadcasts nor resizes",
                  name, neuron_host::format_sizes(given.sizes).c_str(), neuron_host::format_sizes(self.sizes).c_str());
    if (c10::isFloatingType(computed) && !c10::isFloatingType(given.dtype))
        violation("%s_out: result type %s can't be cast to the desired output type %s", name, c10::toString(computed),
                  c10::toString(given.dtype));
    return *out;
}

// Before an op reads its operands and writes its result (other is NULL
// for a scalar or none): what the kernel wrote through translation windows
// onto them goes to their memory first.
void sync_windows(const TensorImpl &self, const TensorImpl *other, const TensorImpl &target)
{
    neuron_host::windows_sync(self.data, self.byte_size());
    if (other)
        neuron_host::windows_sync(other->data, other->byte_size());
    neuron_host::windows_sync(target.data, target.byte_size());
}

// What the core ledger is told of one op: its operands read (other is
// NULL for a scalar or none), its result written; windows onto the result
// see it.
void account(const TensorImpl &self, const TensorImpl *other, const TensorImpl &target)
{
    neuron_host::windows_refresh(target.data, target.byte_size());
    size_t read = self.byte_size() + (other ? other->byte_size() : 0);
    neuron_host::ledger_elementwise(self.numel, read + target.byte_size());
    neuron_host::ledger_read(self, self.data, self.byte_size());
    if (other)
        neuron_host::ledger_read(*other, other->data, other->byte_size());
    neuron_host::ledger_write(target, target.data, target.byte_size());
}

struct UnaryRule {
    const char *name;
    double (*on_floating)(double);
    int64_t (*on_integers)(int64_t); // NULL: integer input gives Float
    bool integers_only;
};

Tensor unary(const UnaryRule &rule, Tensor *out, const Tensor &self_tensor)
{
    const TensorImpl &self = impl_of(self_tensor);
    bool integer_input = !c10::isFloatingType(self.dtype);
    if (rule.integers_only && !integer_input)
        violation("%s: needs an integer tensor, got %s", rule.name, c10::toString(self.dtype));
    ScalarType computed = integer_input && !rule.on_integers ? kFloat : self.dtype;
    Tensor result = prepare_out(rule.name, out, self, computed);
    const TensorImpl &target = impl_of(result);
    sync_windows(self, nullptr, target);
    for (int64_t i = 0; i < self.numel; i++) {
        const char *from = neuron_host::element_address(self, i);
        char *to = neuron_host::element_address(target, i);
        if (c10::isFloatingType(computed))
            neuron_host::element_store_double(to, target.dtype,
                                              rule.on_floating(neuron_host::element_load_double(from, self.dtype)));
        else
            neuron_host::element_store_integer(to, target.dtype,
                                               rule.on_integers(neuron_host::element_load_integer(from, self.dtype)));
    }
    account(self, nullptr, target);
    return result;
}

struct BinaryRule {
    const char *name;
    double (*on_floating)(double a, double b, double alpha);
    int64_t (*on_integers)(int64_t a, int64_t b, int64_t alpha); // NULL: integers give Float
    bool integers_only;
};

Tensor binary(const BinaryRule &rule, Tensor *out, const Tensor &self_tensor, const Operand &other,
              const Scalar &alpha)
{
    const TensorImpl &self = impl_of(self_tensor);
    if (other.tensor && other.tensor->sizes != self.sizes)
        violation("%s: shapes %s and %s differ: the device does not broadcast", rule.name,
                  neuron_host::format_sizes(self.sizes).c_str(), neuron_host::format_sizes(other.tensor->sizes).c_str());
    ScalarType computed = promote(self.dtype, other);
    if (rule.integers_only && c10::isFloatingType(computed))
        violation("%s: needs integer operands, got %s", rule.name, c10::toString(computed));
    if (!c10::isFloatingType(computed) && !rule.on_integers)
        computed = kFloat;
    if (!c10::isFloatingType(computed) && alpha.isFloatingPoint())
        violation("%s: for integral input tensors, argument alpha must not be a floating point number", rule.name);
    Tensor result = prepare_out(rule.name, out, self, computed);
    const TensorImpl &target = impl_of(result);
    sync_windows(self, other.tensor, target);
    for (int64_t i = 0; i < self.numel; i++) {
        const char *from = neuron_host::element_address(self, i);
        char *to = neuron_host::element_address(target, i);
        if (c10::isFloatingType(computed))
            neuron_host::element_store_double(
                to, target.dtype,
                rule.on_floating(neuron_host::element_load_double(from, self.dtype), other.as_double(i), alpha.toDouble()));
        else
            neuron_host::element_store_integer(
                to, target.dtype,
                rule.on_integers(neuron_host::element_load_integer(from, self.dtype), other.as_integer(i), alpha.toLong()));
    }
    account(self, other.tensor, target);
    return result;
}

// Integer arithmetic wraps (two's complement), without C++'s undefined
// signed overflow.
int64_t wrap(uint64_t value)
{
    return static_cast<int64_t>(value);
}

int64_t integer_power(int64_t base, int64_t exponent, int64_t)
{
    if (exponent < 0)
        violation("pow: Integers to negative integer powers are not allowed.");
    uint64_t result = 1;
    uint64_t factor = static_cast<uint64_t>(base);
    for (; exponent; exponent >>= 1) {
        if (exponent & 1)
            result *= factor;
        factor *= factor;
    }
    return wrap(result);
}

const UnaryRule abs_rule = {"abs", [](double x) { return fabs(x); },
                            [](int64_t x) { return x < 0 ? wrap(0 - static_cast<uint64_t>(x)) : x; }, false};
const UnaryRule ceil_rule = {"ceil", [](double x) { return ::ceil(x); }, [](int64_t x) { return x; }, false};
const UnaryRule floor_rule = {"floor", [](double x) { return ::floor(x); }, [](int64_t x) { return x; }, false};
const UnaryRule sin_rule = {"sin", [](double x) { return ::sin(x); }, nullptr, false};
const UnaryRule cos_rule = {"cos", [](double x) { return ::cos(x); }, nullptr, false};
const UnaryRule tan_rule = {"tan", [](double x) { return ::tan(x); }, nullptr, false};
const UnaryRule log_rule = {"log", [](double x) { return ::log(x); }, nullptr, false};
const UnaryRule log2_rule = {"log2", [](double x) { return ::log2(x); }, nullptr, false};
const UnaryRule log10_rule = {"log10", [](double x) { return ::log10(x); }, nullptr, false};
const UnaryRule exp_rule = {"exp", [](double x) { return ::exp(x); }, nullptr, false};
const UnaryRule bitwise_not_rule = {"bitwise_not", nullptr, [](int64_t x) { return ~x; }, true};

const BinaryRule add_rule = {
    "add", [](double a, double b, double alpha) { return a + alpha * b; },
    [](int64_t a, int64_t b, int64_t alpha) {
        return wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(alpha) * static_cast<uint64_t>(b));
    },
    false};
const BinaryRule sub_rule = {
    "sub", [](double a, double b, double alpha) { return a - alpha * b; },
    [](int64_t a, int64_t b, int64_t alpha) {
        return wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(alpha) * static_cast<uint64_t>(b));
    },
    false};
const BinaryRule mul_rule = {
    "mul", [](double a, double b, double) { return a * b; },
    [](int64_t a, int64_t b, int64_t) { return wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }, false};
const BinaryRule div_rule = {"div", [](double a, double b, double) { return a / b; }, nullptr, false};
const BinaryRule pow_rule = {"pow", [](double a, double b, double) { return ::pow(a, b); }, integer_power, false};
// pow with a Scalar base: the tensor is the exponent, the other operand the base.
const BinaryRule pow_of_scalar_rule = {"pow", [](double exponent, double base, double) { return ::pow(base, exponent); },
                                       [](int64_t exponent, int64_t base, int64_t) {
                                           return integer_power(base, exponent, 0);
                                       },
                                       false};
const BinaryRule bitwise_and_rule = {"bitwise_and", nullptr, [](int64_t a, int64_t b, int64_t) { return a & b; },
                                     true};
const BinaryRule bitwise_or_rule = {"bitwise_or", nullptr, [](int64_t a, int64_t b, int64_t) { return a | b; }, true};

Tensor clamp_into(Tensor *out, const Tensor &self_tensor, const Scalar &min, const Scalar &max)
{
    const TensorImpl &self = impl_of(self_tensor);
    bool floating = c10::isFloatingType(self.dtype) || min.isFloatingPoint() || max.isFloatingPoint();
    ScalarType computed = floating && !c10::isFloatingType(self.dtype) ? kFloat : self.dtype;
    Tensor result = prepare_out("clamp", out, self, computed);
    const TensorImpl &target = impl_of(result);
    sync_windows(self, nullptr, target);
    for (int64_t i = 0; i < self.numel; i++) {
        const char *from = neuron_host::element_address(self, i);
        char *to = neuron_host::element_address(target, i);
        if (floating) {
            double value = neuron_host::element_load_double(from, self.dtype);
            value = value < min.toDouble() ? min.toDouble() : value;
            value = value > max.toDouble() ? max.toDouble() : value;
            neuron_host::element_store_double(to, target.dtype, value);
        } else {
            int64_t value = neuron_host::element_load_integer(from, self.dtype);
            value = value < min.toLong() ? min.toLong() : value;
            value = value > max.toLong() ? max.toLong() : value;
            neuron_host::element_store_integer(to, target.dtype, value);
        }
    }
    account(self, nullptr, target);
    return result;
}

} // namespace

Tensor abs(const Tensor &self) { return unary(abs_rule, nullptr, self); }
Tensor ceil(const Tensor &self) { return unary(ceil_rule, nullptr, self); }
Tensor floor(const Tensor &self) { return unary(floor_rule, nullptr, self); }
Tensor sin(const Tensor &self) { return unary(sin_rule, nullptr, self); }
Tensor cos(const Tensor &self) { return unary(cos_rule, nullptr, self); }
Tensor tan(const Tensor &self) { return unary(tan_rule, nullptr, self); }
Tensor log(const Tensor &self) { return unary(log_rule, nullptr, self); }
Tensor log2(const Tensor &self) { return unary(log2_rule, nullptr, self); }
Tensor log10(const Tensor &self) { return unary(log10_rule, nullptr, self); }
Tensor exp(const Tensor &self) { return unary(exp_rule, nullptr, self); }
Tensor bitwise_not(const Tensor &self) { return unary(bitwise_not_rule, nullptr, self); }
Tensor &abs_out(Tensor &out, const Tensor &self) { unary(abs_rule, &out, self); return out; }
Tensor &ceil_out(Tensor &out, const Tensor &self) { unary(ceil_rule, &out, self); return out; }
Tensor &floor_out(Tensor &out, const Tensor &self) { unary(floor_rule, &out, self); return out; }
Tensor &sin_out(Tensor &out, const Tensor &self) { unary(sin_rule, &out, self); return out; }
Tensor &cos_out(Tensor &out, const Tensor &self) { unary(cos_rule, &out, self); return out; }
Tensor &tan_out(Tensor &out, const Tensor &self) { unary(tan_rule, &out, self); return out; }
Tensor &log_out(Tensor &out, const Tensor &self) { unary(log_rule, &out, self); return out; }
Tensor &log2_out(Tensor &out, const Tensor &self) { unary(log2_rule, &out, self); return out; }
Tensor &log10_out(Tensor &out, const Tensor &self) { unary(log10_rule, &out, self); return out; }
Tensor &exp_out(Tensor &out, const Tensor &self) { unary(exp_rule, &out, self); return out; }
Tensor &bitwise_not_out(Tensor &out, const Tensor &self) { unary(bitwise_not_rule, &out, self); return out; }

Tensor clamp(const Tensor &self, const Scalar &min, const Scalar &max) { return clamp_into(nullptr, self, min, max); }
Tensor &clamp_out(Tensor &out, const Tensor &self, const Scalar &min, const Scalar &max)
{
    clamp_into(&out, self, min, max);
    return out;
}

Tensor pow(const Tensor &self, const Tensor &exponent) { return binary(pow_rule, nullptr, self, tensor_operand(exponent), 1); }
Tensor pow(const Tensor &self, const Scalar &exponent) { return binary(pow_rule, nullptr, self, scalar_operand(exponent), 1); }
Tensor &pow_out(Tensor &out, const Tensor &self, const Tensor &exponent)
{
    binary(pow_rule, &out, self, tensor_operand(exponent), 1);
    return out;
}
Tensor &pow_out(Tensor &out, const Tensor &self, const Scalar &exponent)
{
    binary(pow_rule, &out, self, scalar_operand(exponent), 1);
    return out;
}

Tensor pow(const Scalar &self, const Tensor &exponent)
{
    return binary(pow_of_scalar_rule, nullptr, exponent, scalar_operand(self), 1);
}
Tensor &pow_out(Tensor &out, const Scalar &self, const Tensor &exponent)
{
    binary(pow_of_scalar_rule, &out, exponent, scalar_operand(self), 1);
    return out;
}

Tensor add(const Tensor &self, const Tensor &other, const Scalar &alpha) { return binary(add_rule, nullptr, self, tensor_operand(other), alpha); }
Tensor add(const Tensor &self, const Scalar &other, const Scalar &alpha) { return binary(add_rule, nullptr, self, scalar_operand(other), alpha); }
Tensor sub(const Tensor &self, const Tensor &other, const Scalar &alpha) { return binary(sub_rule, nullptr, self, tensor_operand(other), alpha); }
Tensor sub(const Tensor &self, const Scalar &other, const Scalar &alpha) { return binary(sub_rule, nullptr, self, scalar_operand(other), alpha); }
Tensor mul(const Tensor &self, const Tensor &other) { return binary(mul_rule, nullptr, self, tensor_operand(other), 1); }
Tensor mul(const Tensor &self, const Scalar &other) { return binary(mul_rule, nullptr, self, scalar_operand(other), 1); }
Tensor div(const Tensor &self, const Tensor &other) { return binary(div_rule, nullptr, self, tensor_operand(other), 1); }
Tensor div(const Tensor &self, const Scalar &other) { return binary(div_rule, nullptr, self, scalar_operand(other), 1); }
Tensor bitwise_and(const Tensor &self, const Tensor &other) { return binary(bitwise_and_rule, nullptr, self, tensor_operand(other), 1); }
Tensor bitwise_and(const Tensor &self, const Scalar &other) { return binary(bitwise_and_rule, nullptr, self, scalar_cast_to(other, self), 1); }
Tensor bitwise_or(const Tensor &self, const Tensor &other) { return binary(bitwise_or_rule, nullptr, self, tensor_operand(other), 1); }
Tensor bitwise_or(const Tensor &self, const Scalar &other) { return binary(bitwise_or_rule, nullptr, self, scalar_cast_to(other, self), 1); }
Tensor bitwise_and(const Scalar &self, const Tensor &other) { return binary(bitwise_and_rule, nullptr, other, scalar_cast_to(self, other), 1); }
Tensor bitwise_or(const Scalar &self, const Tensor &other) { return binary(bitwise_or_rule, nullptr, other, scalar_cast_to(self, other), 1); }

Tensor &add_out(Tensor &out, const Tensor &self, const Tensor &other, const Scalar &alpha) { binary(add_rule, &out, self, tensor_operand(other), alpha); return out; }
Tensor &add_out(Tensor &out, const Tensor &self, const Scalar &other, const Scalar &alpha) { binary(add_rule, &out, self, scalar_operand(other), alpha); return out; }
Tensor &sub_out(Tensor &out, const Tensor &self, const Tensor &other, const Scalar &alpha) { binary(sub_rule, &out, self, tensor_operand(other), alpha); return out; }
Tensor &sub_out(Tensor &out, const Tensor &self, const Scalar &other, const Scalar &alpha) { binary(sub_rule, &out, self, scalar_operand(other), alpha); return out; }
Tensor &mul_out(Tensor &out, const Tensor &self, const Tensor &other) { binary(mul_rule, &out, self, tensor_operand(other), 1); return out; }
Tensor &mul_out(Tensor &out, const Tensor &self, const Scalar &other) { binary(mul_rule, &out, self, scalar_operand(other), 1); return out; }
Tensor &div_out(Tensor &out, const Tensor &self, const Tensor &other) { binary(div_rule, &out, self, tensor_operand(other), 1); return out; }
Tensor &div_out(Tensor &out, const Tensor &self, const Scalar &other) { binary(div_rule, &out, self, scalar_operand(other), 1); return out; }
Tensor &bitwise_and_out(Tensor &out, const Tensor &self, const Tensor &other) { binary(bitwise_and_rule, &out, self, tensor_operand(other), 1); return out; }
Tensor &bitwise_and_out(Tensor &out, const Tensor &self, const Scalar &other) { binary(bitwise_and_rule, &out, self, scalar_cast_to(other, self), 1); return out; }
Tensor &bitwise_or_out(Tensor &out, const Tensor &self, const Tensor &other) { binary(bitwise_or_rule, &out, self, tensor_operand(other), 1); return out; }
Tensor &bitwise_or_out(Tensor &out, const Tensor &self, const Scalar &other) { binary(bitwise_or_rule, &out, self, scalar_cast_to(other, self), 1); return out; }
Tensor &bitwise_and_out(Tensor &out, const Scalar &self, const Tensor &other) { binary(bitwise_and_rule, &out, other, scalar_cast_to(self, other), 1); return out; }
Tensor &bitwise_or_out(Tensor &out, const Scalar &self, const Tensor &other) { binary(bitwise_or_rule, &out, other, scalar_cast_to(self, other), 1); return out; }

} // namespace at
