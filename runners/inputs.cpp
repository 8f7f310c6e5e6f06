#include "runners/inputs.h"

#include "core/error.h"
#include "core/npy.h"
#include "kernels/backend.h"
#include "kernels/seeded_inputs.h"

namespace parity {

std::vector<Tensor> seeded_inputs(const Case& c, uint64_t seed) { return seeded_inputs(c.line, seed, c.density); }

std::vector<Tensor> inputs_from_folder(const Case& c, const std::string& dir) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : op_inputs(c.line)) {
    const std::string path = dir + "/" + c.name + "." + s.name + ".npy";
    Tensor t = read_npy(path);
    if (t.dtype() != s.dtype || t.shape() != s.shape) {
      throw Error("holds " + std::string(dtype_name(t.dtype())) + " " + t.shape().str() + ", the case needs " +
                  std::string(dtype_name(s.dtype)) + " " + s.shape.str())
          .file(path);
    }
    out.push_back(std::move(t));
  }
  return out;
}

const DumpLayer* dump_layer_for(const Case& c, const Dump& d, std::string& why_not) {
  const std::string call = canonical_line(c.line);
  std::string other;  // a layer of the case's name that runs another call, for the reason
  for (const DumpLayer& l : d.layers) {
    if (l.name != c.name) continue;
    std::string line;
    try {
      line = canonical_line(l.params);
    } catch (const Error&) {
      line = l.params;  // an op parity does not know: never the case's call
    }
    if (line == call) return &l;
    other = l.params;
  }
  why_not = other.empty() ? "no layer " + c.name + " in " + d.dir
                          : "layer " + c.name + " of " + d.dir + " runs '" + other + "', not this call";
  return nullptr;
}

std::vector<Tensor> inputs_from_dump(const Case& c, const Dump& d, const DumpLayer& l) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : op_inputs(c.line)) {
    const DumpTensorInfo* t = nullptr;
    for (const DumpTensorInfo& x : l.inputs) t = x.role == s.name ? &x : t;
    if (!t) throw Error("the dump records no input '" + s.name + "' for this layer").file(d.dir);
    out.push_back(d.load(*t));  // dtype, shape and hash checked against the manifest
  }
  check_inputs(op_name_of(c.line), op_inputs(c.line), out);
  return out;
}

}  // namespace parity
