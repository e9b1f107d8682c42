/* neuron/host/scalar_type.h - the eight device dtypes and their C++ types. */
#ifndef NEURON_HOST_SCALAR_TYPE_H
#define NEURON_HOST_SCALAR_TYPE_H

#include <stddef.h>
#include <stdint.h>

namespace c10 {

// Numbered as PyTorch numbers them, which is also how host_abi.h numbers
// customop_host_dtype: the runner passes these numbers through unchanged.
enum class ScalarType : int8_t {
    Byte = 0,
    Char = 1,
    Short = 2,
    Int = 3,
    Long = 4,
    Half = 5,
    Float = 6,
    BFloat16 = 15,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

// IEEE binary16 storage; arithmetic converts to float, as c10::Half does.
struct Half {
    uint16_t x;
    // cppcheck-suppress uninitMemberVar ; trivial, as c10::Half is: an array of them is not zeroed
    Half() = default;
    Half(float value);
    operator float() const;
};

// The upper half of a binary32; converting rounds to nearest even.
struct BFloat16 {
    uint16_t x;
    // cppcheck-suppress uninitMemberVar ; trivial, as c10::BFloat16 is: an array of them is not zeroed
    BFloat16() = default;
    BFloat16(float value);
    operator float() const;
};

// "Float", "Int", ... as PyTorch prints them.
const char *toString(ScalarType type);
// Bytes per element.
size_t elementSize(ScalarType type);
// Float, Half and BFloat16.
bool isFloatingType(ScalarType type);
// The five integer dtypes (there is no Bool on the device).
bool isIntegralType(ScalarType type, bool include_bool = false);
// True for the eight dtypes above; the runtime rejects any other number.
bool isDeviceType(int type);

// The dtype of a C++ element type; only the eight device types have one.
template <typename T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = kByte; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = kChar; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = kShort; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = kInt; };
// int64_t is long here and long long on the device: both name kLong.
template <> struct CppTypeToScalarType<long> { static constexpr ScalarType value = kLong; };
template <> struct CppTypeToScalarType<long long> { static constexpr ScalarType value = kLong; };
template <> struct CppTypeToScalarType<Half> { static constexpr ScalarType value = kHalf; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = kFloat; };
template <> struct CppTypeToScalarType<BFloat16> { static constexpr ScalarType value = kBFloat16; };

} // namespace c10

#endif
