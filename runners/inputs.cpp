#include "runners/inputs.h"

#include "core/error.h"
#include "core/npy.h"
#include "kernels/backend.h"
#include "kernels/seeded_inputs.h"

namespace parity {

std::vector<Tensor> seeded_inputs(const Case& c, uint64_t seed) { return seeded_inputs(c.line, seed, c.density); }
std::vector<Tensor> seeded_inputs(const Case& c, const Call& call, uint64_t seed) { return seeded_inputs(call, c.line, seed, c.density); }

std::vector<Tensor> inputs_from_folder(const std::string& name, const Call& call, const std::string& dir) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : call.inputs()) {
    const std::string path = dir + "/" + name + "." + s.name + ".npy";
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

const DumpLayer* dump_layer_for(const std::string& name, const Call& call, const Dump& d, std::string& why_not) {
  std::string other;  // a layer of the case's name that runs another call, for the reason
  for (const DumpLayer& l : d.layers) {
    if (l.name != name) continue;
    // The same call in any precision: a float32 dump's inputs replay at --dtype bf16, rounded
    // (an op parity does not know has no call).
    if (l.call && with_half(l.call->line(), HalfType::None) == with_half(call.line(), HalfType::None)) return &l;
    other = l.line;
  }
  why_not = other.empty() ? "no layer " + name + " in " + d.dir
                          : "layer " + name + " of " + d.dir + " runs '" + other + "', not this call";
  return nullptr;
}

std::vector<Tensor> inputs_from_dump(const Call& call, const Dump& d, const DumpLayer& l) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : call.inputs()) {
    const DumpTensorInfo* t = nullptr;
    for (const DumpTensorInfo& x : l.inputs) t = x.role == s.name ? &x : t;
    if (!t) throw Error("the dump records no input '" + s.name + "' for this layer").file(d.dir);
    out.push_back(d.load(*t));  // dtype, shape and hash checked against the manifest
  }
  check_inputs(call.op(), call.inputs(), out);
  return out;
}

}  // namespace parity
