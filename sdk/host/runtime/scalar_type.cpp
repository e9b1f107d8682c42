/* scalar_type.cpp - the dtype table and the Half / BFloat16 conversions. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "neuron/host/scalar_type.h"
#include "neuron/host_abi.h"

// The runtime hands a tensor's dtype number to kernels as a ScalarType: the
// two numberings are one.
static_assert(static_cast<int>(c10::kByte) == CUSTOMOP_HOST_UINT8, "kByte");
static_assert(static_cast<int>(c10::kChar) == CUSTOMOP_HOST_INT8, "kChar");
static_assert(static_cast<int>(c10::kShort) == CUSTOMOP_HOST_INT16, "kShort");
static_assert(static_cast<int>(c10::kInt) == CUSTOMOP_HOST_INT32, "kInt");
static_assert(static_cast<int>(c10::kLong) == CUSTOMOP_HOST_INT64, "kLong");
static_assert(static_cast<int>(c10::kHalf) == CUSTOMOP_HOST_FLOAT16, "kHalf");
static_assert(static_cast<int>(c10::kFloat) == CUSTOMOP_HOST_FLOAT32, "kFloat");
static_assert(static_cast<int>(c10::kBFloat16) == CUSTOMOP_HOST_BFLOAT16, "kBFloat16");

namespace c10 {
namespace {

uint32_t float_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

float bits_float(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

// Drops the low shift bits of value, rounding to nearest, ties to even.
uint32_t shift_right_rounding(uint32_t value, int shift)
{
    uint32_t kept = value >> shift;
    uint32_t rest = value & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1)))
        kept++;
    return kept;
}

uint16_t float_to_half(float value)
{
    uint32_t bits = float_bits(value);
    uint32_t sign = (bits >> 16) & 0x8000;
    uint32_t magnitude = bits & 0x7fffffff;
    if (magnitude >= 0x7f800000) // infinity, or NaN kept quiet
        return static_cast<uint16_t>(sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 : 0));
    int exponent = static_cast<int>(magnitude >> 23) - 127 + 15;
    if (exponent >= 31)
        return static_cast<uint16_t>(sign | 0x7c00);
    if (exponent <= 0) { // a subnormal half, or zero
        if (exponent < -10)
            return static_cast<uint16_t>(sign);
        uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
        return static_cast<uint16_t>(sign | shift_right_rounding(mantissa, 14 - exponent));
    }
    // A carry out of the mantissa correctly bumps the exponent (to
    // infinity at the top).
    uint32_t unrounded = (static_cast<uint32_t>(exponent) << 23) | (magnitude & 0x7fffff);
    return static_cast<uint16_t>(sign | shift_right_rounding(unrounded, 13));
}

float half_to_float(uint16_t half)
{
    uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
    uint32_t exponent = (half >> 10) & 0x1f;
    uint32_t mantissa = half & 0x3ff;
    if (exponent == 0) {
        float magnitude = ldexpf(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31)
        return bits_float(sign | 0x7f800000 | (mantissa << 13));
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

} // namespace

Half::Half(float value) : x(float_to_half(value)) {}

Half::operator float() const
{
    return half_to_float(x);
}

BFloat16::BFloat16(float value)
{
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffff) > 0x7f800000)
        x = static_cast<uint16_t>((bits >> 16) | 0x40); // NaN stays NaN
    else
        x = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

BFloat16::operator float() const
{
    return bits_float(static_cast<uint32_t>(x) << 16);
}

const char *toString(ScalarType type)
{
    switch (type) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::BFloat16: return "BFloat16";
    }
    return "Unknown";
}

size_t elementSize(ScalarType type)
{
    switch (type) {
    case ScalarType::Byte: case ScalarType::Char: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: return 8;
    }
    return 0;
}

bool isFloatingType(ScalarType type)
{
    return type == kFloat || type == kHalf || type == kBFloat16;
}

bool isIntegralType(ScalarType type, bool include_bool)
{
    (void)include_bool; // the device has no Bool
    return isDeviceType(static_cast<int>(type)) && !isFloatingType(type);
}

bool isDeviceType(int type)
{
    return (type >= 0 && type <= 6) || type == 15;
}

} // namespace c10
