#pragma once
// IEEE 754 binary16 storage type and exact conversions, written out so host code needs neither
// CUDA's cuda_fp16.h nor compiler extensions (_Float16), and so every compiler rounds alike.
#include <cstdint>
#include <cstring>

namespace parity {

struct Half {
  uint16_t bits = 0;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Exact: every binary16 value is a binary32 value.
inline float half_to_float(Half h) {
  const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // Inf / NaN
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);  // +-0
  // Subnormal half: normalise into a binary32 normal.
  int e = -1;
  do {
    mant <<= 1;
    ++e;
  } while ((mant & 0x400u) == 0);
  return bits_float(sign | uint32_t(112 - e) << 23 | ((mant & 0x3ffu) << 13));
}

// Round to nearest, ties to even, as numpy's astype(float16) and CUDA's __float2half_rn do.
inline Half float_to_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN (NaN keeps a quiet payload bit)
    return Half{uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u))};
  }
  if (abs >= 0x477ff000u) return Half{uint16_t(sign | 0x7c00u)};  // rounds past 65504: Inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return Half{sign};  // below half of the smallest subnormal (2^-25)
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // 14..24: bits dropped to land on a 2^-24 grid
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return Half{uint16_t(sign | q)};
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits; a carry into the exponent
  // is the correct result (it may even reach Inf, excluded above).
  uint32_t h = ((abs >> 13) - (112u << 10));
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return Half{uint16_t(sign | h)};
}

// Round to nearest, ties to even, keeping `bits` explicit mantissa bits of a float32 (the
// exponent range stays float32's, as TF32 and bfloat16 keep it). NaN and Inf pass through.
inline float round_mantissa(float f, int bits) {
  uint32_t u = float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  const int drop = 23 - bits;
  u += (1u << (drop - 1)) - 1 + ((u >> drop) & 1u);
  u &= ~((1u << drop) - 1);
  return bits_float(u);
}

// The reduced precisions a call can run in (`precision=fp16|bf16` on its line, kernels/call.h).
// Their values travel in float32 tensors holding exactly the values of that type, so dumps stay
// readable by numpy and torch and every float32 path reads them (docs/COMMANDS.md, "Half precision").
enum class HalfType : uint8_t { None, Fp16, Bf16 };

// `f` rounded to nearest even in `h` (binary16's range: beyond 65504 is Inf; bfloat16 keeps
// float32's exponent range), as a float32.
inline float round_to(float f, HalfType h) {
  if (h == HalfType::Fp16) return half_to_float(float_to_half(f));
  if (h == HalfType::Bf16) return round_mantissa(f, 7);
  return f;
}

}  // namespace parity
