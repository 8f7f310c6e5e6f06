// The dump manifest reader: any text is either refused with parity::Error or read into layers
// whose tensor entries are safe to open (plain file names inside the dump, known dtypes, valid
// shapes).
#include <string_view>

#include "compare/dump_reader.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  Dump d;
  try {
    d = parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz/manifest.json");
  } catch (const Error&) {
    return 0;
  }
  PARITY_FUZZ_CHECK(d.dir == "fuzz");
  for (const DumpLayer& l : d.layers) {
    for (const auto* list : {&l.inputs, &l.outputs}) {
      for (const DumpTensorInfo& t : *list) {
        PARITY_FUZZ_CHECK(!t.file.empty() && t.file[0] != '.' && t.file.find('/') == std::string::npos);
        PARITY_FUZZ_CHECK(dtype_from_name(t.dtype).has_value());
        PARITY_FUZZ_CHECK(Shape(t.shape).rank() == t.shape.size());
      }
    }
  }
  return 0;
}
