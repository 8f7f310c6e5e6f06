// The .npy reader: any byte string is either refused with parity::Error or read as a tensor that
// parity's writer encodes back into a file the reader gives back unchanged.
#include <cstring>

#include "core/error.h"
#include "core/npy.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  Tensor t;
  try {
    t = parse_npy(reinterpret_cast<const std::byte*>(data), size, "fuzz.npy");
  } catch (const Error&) {
    return 0;
  }
  std::string image;
  try {
    image = encode_npy(t);
  } catch (const Error&) {
    // Only refusal allowed: more dimensions than numpy loads (the reader takes up to 64).
    PARITY_FUZZ_CHECK(t.shape().rank() > kMaxNpyWriteRank);
    return 0;
  }
  const Tensor back = parse_npy(reinterpret_cast<const std::byte*>(image.data()), image.size(), "fuzz-roundtrip.npy");
  PARITY_FUZZ_CHECK(back.dtype() == t.dtype() && back.shape().dims() == t.shape().dims());
  PARITY_FUZZ_CHECK(back.nbytes() == t.nbytes() && (t.nbytes() == 0 || std::memcmp(back.bytes(), t.bytes(), t.nbytes()) == 0));
  return 0;
}
