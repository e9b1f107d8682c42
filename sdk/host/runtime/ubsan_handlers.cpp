/* ubsan_handlers.cpp - lib/libcustomop_host_undefined.a: the handlers that
 * the checks of -fsanitize=undefined call (build-custom-op
 * --sanitize=undefined), in place of UBSan's runtime.
 *
 * Each ends the op as a violation naming the kernel's file:line:column, what
 * went wrong as UBSan words it, and the check (-fsanitize=NAME), so the
 * error is the core's and the op's and the next call works: a violation
 * leaves the kernel at once, as any broken device rule does.  UBSan's own
 * runtime could only report and go on, or end the process.
 *
 * The handlers' arguments follow the interface that gcc and clang share
 * with UBSan's runtime: a static record per check (its source location and
 * the types involved) and the values, each in a pointer-sized word (or,
 * when wider, at the address in it).  The "_abort" handlers are the ones
 * -fno-sanitize-recover calls. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "neuron/host/violation.h"

namespace {

struct SourceLocation {
    const char *file;
    uint32_t line;
    uint32_t column;
};

struct TypeDescriptor {
    uint16_t kind; // 0 integer, 1 float, 0xffff anything else
    uint16_t info; // integer: log2(bits) << 1 | signed; float: bits
    char name[1];
};

using ValueHandle = uintptr_t;

struct TypeMismatchData {
    SourceLocation location;
    const TypeDescriptor *type;
    unsigned char log_alignment;
    unsigned char check_kind;
};
struct AlignmentAssumptionData {
    SourceLocation location;
    SourceLocation assumption_location;
    const TypeDescriptor *type;
};
// The record of an arithmetic overflow, a VLA bound and an invalid value.
struct OneTypeData {
    SourceLocation location;
    const TypeDescriptor *type;
};
// The record of a shift (left, right), an index (array, index) and a
// float-to-integer conversion (from, to).
struct TwoTypesData {
    SourceLocation location;
    const TypeDescriptor *first;
    const TypeDescriptor *second;
};
struct UnreachableData {
    SourceLocation location;
};
struct InvalidBuiltinData {
    SourceLocation location;
    unsigned char kind;
};
struct NonNullReturnData {
    SourceLocation attribute_location;
};
struct NonNullArgData {
    SourceLocation location;
    SourceLocation attribute_location;
    int argument_index;
};
struct PointerOverflowData {
    SourceLocation location;
};

bool is_integer(const TypeDescriptor *type) { return type->kind == 0; }
bool is_signed(const TypeDescriptor *type) { return is_integer(type) && (type->info & 1); }
unsigned integer_bits(const TypeDescriptor *type) { return 1u << (type->info >> 1); }

// A value as text: an integer of the type's width and sign, a float, or
// (a type the handler cannot read) its raw word.
struct ValueText {
    char text[64];
};

ValueText value_text(const TypeDescriptor *type, ValueHandle value)
{
    ValueText out;
    if (is_integer(type)) {
        unsigned bits = integer_bits(type);
        if (bits > 64) {
            // Wider than a word: the handle is its address; the low 64 bits
            // (little-endian) tell most values.
            uint64_t low;
            memcpy(&low, reinterpret_cast<const void *>(value), sizeof low);
            snprintf(out.text, sizeof out.text, "%" PRIu64 " (the low 64 bits of a %u-bit value)", low, bits);
        } else if (is_signed(type)) {
            int64_t signed_value = static_cast<int64_t>(static_cast<uint64_t>(value) << (64 - bits)) >> (64 - bits);
            snprintf(out.text, sizeof out.text, "%" PRId64, signed_value);
        } else {
            uint64_t unsigned_value = bits == 64 ? value : value & ((uint64_t{1} << bits) - 1);
            snprintf(out.text, sizeof out.text, "%" PRIu64, unsigned_value);
        }
    } else if (type->kind == 1 && type->info == 32) {
        float number;
        memcpy(&number, &value, sizeof number);
        snprintf(out.text, sizeof out.text, "%g", static_cast<double>(number));
    } else if (type->kind == 1 && type->info == 64) {
        double number;
        memcpy(&number, &value, sizeof number);
        snprintf(out.text, sizeof out.text, "%g", number);
    } else if (type->kind == 1) {
        long double number;
        memcpy(&number, reinterpret_cast<const void *>(value), sizeof number);
        snprintf(out.text, sizeof out.text, "%Lg", number);
    } else {
        snprintf(out.text, sizeof out.text, "0x%" PRIxPTR, value);
    }
    return out;
}

bool is_negative(const TypeDescriptor *type, ValueHandle value)
{
    if (!is_signed(type))
        return false;
    unsigned bits = integer_bits(type);
    if (bits > 64) {
        unsigned char top;
        memcpy(&top, reinterpret_cast<const unsigned char *>(value) + bits / 8 - 1, 1);
        return top & 0x80;
    }
    return (static_cast<uint64_t>(value) >> (bits - 1)) & 1;
}

uint64_t unsigned_value(const TypeDescriptor *type, ValueHandle value)
{
    if (integer_bits(type) > 64) {
        uint64_t low;
        memcpy(&low, reinterpret_cast<const void *>(value), sizeof low);
        return low;
    }
    return value;
}

// Ends the op: "undefined behaviour at FILE:LINE:COLUMN: WHAT [-fsanitize=CHECK]".
[[noreturn]] __attribute__((format(printf, 3, 4))) void report(const SourceLocation &location, const char *check,
                                                               const char *format, ...)
{
    char what[700];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(what, sizeof what, format, arguments);
    va_end(arguments);
    neuron_host::violation("undefined behaviour at %s:%u:%u: %s [-fsanitize=%s]",
                           location.file ? location.file : "<unknown file>", location.line, location.column, what,
                           check);
}

const char *const check_kinds[] = {
    "load of", "store to", "reference binding to", "member access within", "member call on", "constructor call on",
    "downcast of", "downcast of", "upcast of", "cast to virtual base of", "_Nonnull binding to",
    "dynamic operation on",
};

[[noreturn]] void type_mismatch(TypeMismatchData *data, ValueHandle pointer)
{
    const char *kind = data->check_kind < sizeof check_kinds / sizeof check_kinds[0] ? check_kinds[data->check_kind]
                                                                                      : "access to";
    uintptr_t alignment = uintptr_t{1} << data->log_alignment;
    if (!pointer)
        report(data->location, "null", "%s null pointer of type %s", kind, data->type->name);
    if (pointer & (alignment - 1))
        report(data->location, "alignment", "%s misaligned address 0x%" PRIxPTR " for type %s, which requires %"
               PRIuPTR " byte alignment", kind, pointer, data->type->name, alignment);
    report(data->location, "object-size", "%s address 0x%" PRIxPTR " with insufficient space for an object of type "
           "%s", kind, pointer, data->type->name);
}

[[noreturn]] void arithmetic_overflow(OneTypeData *data, ValueHandle left, ValueHandle right, char operation)
{
    bool signed_type = is_signed(data->type);
    report(data->location, signed_type ? "signed-integer-overflow" : "unsigned-integer-overflow",
           "%s integer overflow: %s %c %s cannot be represented in type %s", signed_type ? "signed" : "unsigned",
           value_text(data->type, left).text, operation, value_text(data->type, right).text, data->type->name);
}

[[noreturn]] void negate_overflow(OneTypeData *data, ValueHandle old_value)
{
    report(data->location, is_signed(data->type) ? "signed-integer-overflow" : "unsigned-integer-overflow",
           "negation of %s cannot be represented in type %s", value_text(data->type, old_value).text,
           data->type->name);
}

[[noreturn]] void divrem_overflow(OneTypeData *data, ValueHandle left, ValueHandle right)
{
    if (is_signed(data->type) && is_negative(data->type, right) && unsigned_value(data->type, right) == ~uint64_t{0})
        report(data->location, "signed-integer-overflow", "division of %s by -1 cannot be represented in type %s",
               value_text(data->type, left).text, data->type->name);
    report(data->location, is_integer(data->type) ? "integer-divide-by-zero" : "float-divide-by-zero",
           "division by zero");
}

[[noreturn]] void shift_out_of_bounds(TwoTypesData *data, ValueHandle left, ValueHandle right)
{
    const TypeDescriptor *left_type = data->first, *right_type = data->second;
    if (is_negative(right_type, right))
        report(data->location, "shift-exponent", "shift exponent %s is negative", value_text(right_type, right).text);
    if (unsigned_value(right_type, right) >= integer_bits(left_type))
        report(data->location, "shift-exponent", "shift exponent %s is too large for %u-bit type %s",
               value_text(right_type, right).text, integer_bits(left_type), left_type->name);
    if (is_negative(left_type, left))
        report(data->location, "shift-base", "left shift of negative value %s", value_text(left_type, left).text);
    report(data->location, "shift-base", "left shift of %s by %s places cannot be represented in type %s",
           value_text(left_type, left).text, value_text(right_type, right).text, left_type->name);
}

[[noreturn]] void out_of_bounds(TwoTypesData *data, ValueHandle index)
{
    report(data->location, "bounds", "index %s out of bounds for type %s",
           value_text(data->second, index).text, data->first->name);
}

[[noreturn]] void vla_bound(OneTypeData *data, ValueHandle bound)
{
    report(data->location, "vla-bound", "variable length array bound evaluates to non-positive value %s",
           value_text(data->type, bound).text);
}

[[noreturn]] void float_cast_overflow(TwoTypesData *data, ValueHandle from)
{
    report(data->location, "float-cast-overflow", "%s is outside the range of representable values of type %s",
           value_text(data->first, from).text, data->second->name);
}

[[noreturn]] void invalid_value(OneTypeData *data, ValueHandle value)
{
    report(data->location, is_integer(data->type) && integer_bits(data->type) == 8 ? "bool" : "enum",
           "load of value %s, which is not a valid value for type %s", value_text(data->type, value).text,
           data->type->name);
}

[[noreturn]] void pointer_overflow(PointerOverflowData *data, ValueHandle base, ValueHandle result)
{
    if (!base && !result)
        report(data->location, "pointer-overflow", "applying zero offset to null pointer");
    if (!base)
        report(data->location, "pointer-overflow", "applying non-zero offset 0x%" PRIxPTR " to null pointer", result);
    if (!result)
        report(data->location, "pointer-overflow", "applying non-zero offset to non-null pointer 0x%" PRIxPTR
               " produced null pointer", base);
    report(data->location, "pointer-overflow", "pointer index expression with base 0x%" PRIxPTR " overflowed to 0x%"
           PRIxPTR, base, result);
}

} // namespace

// Each check's handler and its -fno-sanitize-recover twin.
#define UBSAN_HANDLER(name, parameters, call)                                                                          \
    extern "C" [[noreturn]] void __ubsan_handle_##name parameters { call; }                                         \
    extern "C" [[noreturn]] void __ubsan_handle_##name##_abort parameters { call; }

UBSAN_HANDLER(type_mismatch_v1, (TypeMismatchData * data, ValueHandle pointer), type_mismatch(data, pointer))
UBSAN_HANDLER(add_overflow, (OneTypeData * data, ValueHandle left, ValueHandle right),
              arithmetic_overflow(data, left, right, '+'))
UBSAN_HANDLER(sub_overflow, (OneTypeData * data, ValueHandle left, ValueHandle right),
              arithmetic_overflow(data, left, right, '-'))
UBSAN_HANDLER(mul_overflow, (OneTypeData * data, ValueHandle left, ValueHandle right),
              arithmetic_overflow(data, left, right, '*'))
UBSAN_HANDLER(negate_overflow, (OneTypeData * data, ValueHandle old_value), negate_overflow(data, old_value))
UBSAN_HANDLER(divrem_overflow, (OneTypeData * data, ValueHandle left, ValueHandle right),
              divrem_overflow(data, left, right))
UBSAN_HANDLER(shift_out_of_bounds, (TwoTypesData * data, ValueHandle left, ValueHandle right),
              shift_out_of_bounds(data, left, right))
UBSAN_HANDLER(out_of_bounds, (TwoTypesData * data, ValueHandle index), out_of_bounds(data, index))
UBSAN_HANDLER(vla_bound_not_positive, (OneTypeData * data, ValueHandle bound), vla_bound(data, bound))
UBSAN_HANDLER(float_cast_overflow, (TwoTypesData * data, ValueHandle from), float_cast_overflow(data, from))
UBSAN_HANDLER(load_invalid_value, (OneTypeData * data, ValueHandle value), invalid_value(data, value))
UBSAN_HANDLER(invalid_builtin, (InvalidBuiltinData * data),
              report(data->location, "builtin", "passing zero to %s, which is not a valid argument",
                     data->kind == 0 ? "ctz()" : "clz()"))
UBSAN_HANDLER(nonnull_return_v1, (NonNullReturnData *, SourceLocation * location),
              report(*location, "returns-nonnull-attribute",
                     "null pointer returned from function declared to never return null"))
UBSAN_HANDLER(nullability_return_v1, (NonNullReturnData *, SourceLocation * location),
              report(*location, "nullability-return",
                     "null pointer returned from function declared to never return null"))
UBSAN_HANDLER(nonnull_arg, (NonNullArgData * data),
              report(data->location, "nonnull-attribute",
                     "null pointer passed as argument %d, which is declared to never be null", data->argument_index))
UBSAN_HANDLER(nullability_arg, (NonNullArgData * data),
              report(data->location, "nullability-arg",
                     "null pointer passed as argument %d, which is declared to never be null", data->argument_index))
UBSAN_HANDLER(pointer_overflow, (PointerOverflowData * data, ValueHandle base, ValueHandle result),
              pointer_overflow(data, base, result))
UBSAN_HANDLER(alignment_assumption,
              (AlignmentAssumptionData * data, ValueHandle pointer, ValueHandle alignment, ValueHandle offset),
              report(data->location, "alignment",
                     "assumption of %" PRIuPTR " byte alignment (with offset of %" PRIuPTR " byte) for pointer of "
                     "type %s failed (address 0x%" PRIxPTR ")", alignment, offset, data->type->name, pointer))

// Reaching these is never recoverable: there is no _abort twin.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name -fsanitize=undefined instrumentation calls
extern "C" [[noreturn]] void __ubsan_handle_builtin_unreachable(UnreachableData *data)
{
    report(data->location, "unreachable", "execution reached an unreachable program point");
}
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name -fsanitize=undefined instrumentation calls
extern "C" [[noreturn]] void __ubsan_handle_missing_return(UnreachableData *data)
{
    report(data->location, "return",
           "execution reached the end of a value-returning function without returning a value");
}
