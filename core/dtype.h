#pragma once
// Element types parity stores and compares. The set is what YOLOv5's operators produce and what
// the .npy files of a dump hold: float16/32/64, int32/64, uint8, bool.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/half.h"

namespace parity {

enum class DType : uint8_t { Float16, Float32, Float64, Int32, Int64, UInt8, Bool };

inline constexpr std::array<DType, 7> kAllDTypes = {DType::Float16, DType::Float32, DType::Float64,
                                                    DType::Int32,   DType::Int64,   DType::UInt8,
                                                    DType::Bool};

size_t dtype_size(DType dt);
std::string_view dtype_name(DType dt);       // "float32", as numpy and torch spell it
std::string_view dtype_npy_descr(DType dt);  // "<f4", "|u1", "|b1"
std::optional<DType> dtype_from_name(std::string_view name);
bool is_floating(DType dt);

// Host storage type of each dtype (bool is one byte holding 0 or 1, as numpy stores it).
template <DType D> struct dtype_traits;
template <> struct dtype_traits<DType::Float16> { using type = Half; };
template <> struct dtype_traits<DType::Float32> { using type = float; };
template <> struct dtype_traits<DType::Float64> { using type = double; };
template <> struct dtype_traits<DType::Int32> { using type = int32_t; };
template <> struct dtype_traits<DType::Int64> { using type = int64_t; };
template <> struct dtype_traits<DType::UInt8> { using type = uint8_t; };
template <> struct dtype_traits<DType::Bool> { using type = bool; };

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<Half>() { return DType::Float16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }

// The type T's arithmetic runs in when it must wrap around as torch's does: an integer's unsigned
// twin (signed overflow is undefined behaviour in C++), a float itself.
template <typename T, bool = std::is_floating_point_v<T>> struct Wrapping { using type = T; };
template <typename T> struct Wrapping<T, false> { using type = std::make_unsigned_t<T>; };
template <typename T> using wrapping_t = typename Wrapping<T>::type;

// Calls fn(T{}) with the storage type of dt, so one generic lambda serves every dtype.
template <typename Fn> decltype(auto) visit_dtype(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::Float16: return fn(Half{});
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::UInt8: return fn(uint8_t{});
    case DType::Bool: return fn(bool{});
  }
  return fn(float{});  // unreachable: every enumerator is handled above
}

}  // namespace parity
