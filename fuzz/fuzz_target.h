#pragma once
// One libFuzzer entry point per parser. A parser may refuse its input only with parity::Error (the
// one-line message the CLI prints); any other exception escapes, and libFuzzer reports it as a
// finding, as it does crashes, sanitizer reports, and the round-trip checks below (abort()).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define PARITY_FUZZ_CHECK(cond)                                                      \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
