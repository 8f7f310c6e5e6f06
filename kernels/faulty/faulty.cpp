#include "kernels/faulty/faulty.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/nms/nms.h"

namespace parity {

namespace {

const char* const kDefects[] = {"pad",     "bias",     "silu16",     "nan",  "nonzero_swap", "nms_tie",
                                "nms_drop", "cat_offset", "ktail", "tf32", "fp16",         "bf16"};

// Round to nearest, ties to even, keeping `bits` explicit mantissa bits of a float32 (the
// exponent range stays float32's: TF32 and bfloat16 have it). NaN and Inf pass through.
float round_mantissa(float f, int bits) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  const int drop = 23 - bits;
  u += (1u << (drop - 1)) - 1 + ((u >> drop) & 1u);
  u &= ~((1u << drop) - 1);
  std::memcpy(&f, &u, 4);
  return f;
}

// A tensor's float32 values rounded as a reduced-precision kernel holds them.
Tensor rounded(const Tensor& t, const std::string& precision) {
  Tensor r = t.clone();
  float* p = r.mutable_data<float>();
  for (int64_t i = 0; i < r.numel(); ++i) {
    p[i] = precision == "fp16" ? half_to_float(float_to_half(p[i])) : round_mantissa(p[i], precision == "tf32" ? 10 : 7);
  }
  return r;
}

bool is_precision_defect(const std::string& d) { return d == "tf32" || d == "fp16" || d == "bf16"; }

class FaultyBackend : public Backend {
 public:
  FaultyBackend(std::string name, std::string defect, int64_t strike)
      : name_(std::move(name)), defect_(std::move(defect)), strike_(strike) {}

  const std::string& name() const override { return name_; }
  std::string unavailable_reason() const override { return ""; }
  bool supports(std::string_view op) const override { return backend("ref").supports(op); }

  void begin_run() const override { calls_ = 0; }

  std::vector<Tensor> run(std::string_view line, const std::vector<Tensor>& inputs) const override {
    const std::string op = op_name_of(line);
    const Backend& ref = backend("ref");
    if (!applies(op, line, inputs)) return ref.run(line, inputs);
    // strike_ 0: every call it applies to (the precision defects, unless given a call number).
    if (++calls_ != strike_ && strike_ != 0) return ref.run(line, inputs);
    return defective(line, inputs, ref);
  }

 private:
  bool applies(const std::string& op, std::string_view line, const std::vector<Tensor>& in) const {
    if (defect_ == "pad") return op == "conv2d" && (Conv2dParams::parse(line).pad_h > 0);
    if (defect_ == "bias") return op == "conv2d" && Conv2dParams::parse(line).bias;
    if (defect_ == "silu16" || defect_ == "nan") return op == "silu";
    if (defect_ == "nonzero_swap") return op == "nonzero";
    if (defect_ == "nms_tie") return op == "nms";
    // The first box visited is always kept, so any box at all gives a box to drop.
    if (defect_ == "nms_drop") return op == "nms" && NmsParams::parse(line).n > 0;
    if (defect_ == "cat_offset") return op == "cat" && in.size() >= 2 && in[1].numel() > 0;
    if (defect_ == "ktail" || is_precision_defect(defect_)) return op == "conv2d";
    return false;
  }

  std::vector<Tensor> defective(std::string_view line, const std::vector<Tensor>& in,
                                const Backend& ref) const {
    std::vector<Tensor> out;
    if (defect_ == "pad") {
      // Row ih is read where ih - 1 belongs: the input moved down one row.
      Tensor x(DType::Float32, in[0].shape());
      const int64_t H = x.shape()[2], W = x.shape()[3], planes = x.shape()[0] * x.shape()[1];
      for (int64_t p = 0; p < planes; ++p) {
        std::memcpy(x.mutable_data<float>() + p * H * W + W, in[0].data<float>() + p * H * W, size_t((H - 1) * W) * 4);
      }
      std::vector<Tensor> shifted = in;
      shifted[0] = x;
      return ref.run(line, shifted);
    }
    if (defect_ == "bias") {
      std::vector<Tensor> changed = in;
      changed[2] = in[2].clone();
      changed[2].mutable_data<float>()[in[2].numel() / 2] += 0.05f;
      return ref.run(line, changed);
    }
    if (defect_ == "ktail") {
      // The last term of every dot product (the last input channel's last tap) left out.
      std::vector<Tensor> changed = in;
      changed[1] = in[1].clone();
      const Shape& w = in[1].shape();
      const int64_t per_oc = w[1] * w[2] * w[3];
      for (int64_t oc = 0; oc < w[0]; ++oc) changed[1].mutable_data<float>()[oc * per_oc + per_oc - 1] = 0;
      return ref.run(line, changed);
    }
    if (is_precision_defect(defect_)) {
      // Inputs and weights rounded, products and sums exact (the reference's float64): TF32
      // tensor cores round the operands and accumulate in float32; float16 and bfloat16
      // kernels also store their output at that precision.
      std::vector<Tensor> changed = in;
      changed[0] = rounded(in[0], defect_), changed[1] = rounded(in[1], defect_);
      out = ref.run(line, changed);
      if (defect_ != "tf32") out[0] = rounded(out[0], defect_);
      return out;
    }
    out = ref.run(line, in);
    Tensor& y = out[0];
    if (defect_ == "silu16") {
      float* p = y.mutable_data<float>();
      const float* x = in[0].data<float>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const float h = half_to_float(float_to_half(x[i]));
        p[i] = half_to_float(float_to_half(h / (1.0f + half_to_float(float_to_half(std::exp(-h))))));
      }
    } else if (defect_ == "nan") {
      if (y.numel() > 0) y.mutable_data<float>()[0] = NAN;
    } else if (defect_ == "nonzero_swap") {
      if (y.shape()[0] >= 2 && y.shape()[1] > 0) {
        int64_t* p = y.mutable_data<int64_t>();
        const int64_t r = y.shape()[1];
        for (int64_t k = 0; k < r; ++k) std::swap(p[k], p[r + k]);
      }
    } else if (defect_ == "nms_tie") {
      int64_t* keep = y.mutable_data<int64_t>();
      const float* scores = in[1].data<float>();
      for (int64_t k = 0; k + 1 < y.numel(); ++k) {
        if (scores[keep[k]] == scores[keep[k + 1]]) {
          std::swap(keep[k], keep[k + 1]);
          break;
        }
      }
    } else if (defect_ == "nms_drop") {
      Tensor rest(DType::Int64, Shape{y.numel() - 1});
      std::copy(y.data<int64_t>() + 1, y.data<int64_t>() + y.numel(), rest.mutable_data<int64_t>());
      y = rest;
    } else if (defect_ == "cat_offset") {
      const CatParams p = CatParams::parse(line);
      // Shift everything after the first input's block of the first outer row by one element.
      const int64_t d = p.resolved_dim();
      int64_t inner = 1;
      for (size_t k = size_t(d) + 1; k < p.xs[0].rank(); ++k) inner *= p.xs[0][k];
      const size_t item = dtype_size(p.dtype), start = size_t(p.xs[0][size_t(d)] * inner) * item;
      std::byte* b = y.mutable_bytes();
      if (start + item < y.nbytes()) std::memmove(b + start + item, b + start, y.nbytes() - start - item);
    }
    return out;
  }

  std::string name_, defect_;
  int64_t strike_;
  mutable std::atomic<int64_t> calls_{0};
};

}  // namespace

std::unique_ptr<Backend> make_faulty_backend(const std::string& name) {
  // faulty:<defect>[:<n>]
  const std::string rest = name.substr(std::string("faulty:").size());
  const size_t colon = rest.find(':');
  const std::string defect = rest.substr(0, colon);
  int64_t strike = 1;
  if (is_precision_defect(defect)) strike = 0;
  if (colon != std::string::npos) {
    try {
      strike = std::stoll(rest.substr(colon + 1));
    } catch (const std::exception&) {
      strike = 0;
    }
    if (strike < 1) throw Error("backend " + name + ": the call number after the defect must be 1 or more");
  }
  bool known = false;
  std::string list;
  for (const char* d : kDefects) known = known || defect == d, list += std::string(list.empty() ? "" : " ") + d;
  if (!known) throw Error("backend " + name + ": unknown defect '" + defect + "' (known: " + list + ")");
  return std::make_unique<FaultyBackend>(name, defect, strike);
}

}  // namespace parity
