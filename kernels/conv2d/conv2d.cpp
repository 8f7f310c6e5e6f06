#include "kernels/conv2d/conv2d.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "kernels/op_line.h"
#include "kernels/op_traits.h"

namespace parity {

Conv2dParams Conv2dParams::parse(std::string_view line) { return parse_fields<Conv2dParams>(line); }

std::string Conv2dParams::str() const { return print_fields(*this); }

void Conv2dParams::validate() const {
  const std::string shapes = "x=" + x.str() + " w=" + w.str();
  auto fail = [&](const std::string& what) { throw Error("conv2d: " + what + " (" + shapes + ")"); };
  if (x.rank() != 4) fail("x must be NCHW (rank 4)");
  if (w.rank() != 4) fail("w must be [OC, IC/groups, KH, KW] (rank 4)");
  if (stride_h <= 0 || stride_w <= 0) fail("stride must be positive");
  if (pad_h < 0 || pad_w < 0) fail("padding must be non-negative");
  if (dil_h <= 0 || dil_w <= 0) fail("dilation must be positive");
  if (groups <= 0) fail("groups must be positive");
  if (x[1] % groups != 0 || w[0] % groups != 0) fail("channels are not divisible by groups=" + std::to_string(groups));
  if (w[1] * groups != x[1]) {
    fail("channel mismatch: x has " + std::to_string(x[1]) + " channels, w expects " + std::to_string(w[1]) +
         " x groups=" + std::to_string(groups));
  }
  if (w[2] <= 0 || w[3] <= 0) fail("kernel size must be positive");
  const int64_t eh = x[2] + 2 * pad_h - dil_h * (w[2] - 1), ew = x[3] + 2 * pad_w - dil_w * (w[3] - 1);
  if (eh <= 0 || ew <= 0) fail("padded input is smaller than the dilated kernel");
}

Shape Conv2dParams::output_shape() const {
  const int64_t oh = (x[2] + 2 * pad_h - dil_h * (w[2] - 1) - 1) / stride_h + 1;
  const int64_t ow = (x[3] + 2 * pad_w - dil_w * (w[3] - 1) - 1) / stride_w + 1;
  return Shape{x[0], w[0], oh, ow};
}

std::vector<TensorSpec> Conv2dParams::inputs() const {
  std::vector<TensorSpec> in = {{"x", DType::Float32, x}, {"w", DType::Float32, w}};
  if (bias) in.push_back({"b", DType::Float32, Shape{w[0]}});
  return in;
}

void check_conv2d_inputs(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_inputs(Conv2dParams::kName, p.inputs(), bias ? std::vector<Tensor>{x, w, *bias} : std::vector<Tensor>{x, w});
}

OpFn conv2d_op(decltype(&conv2d_ref) fn) {
  return bind_op<Conv2dParams>([fn](const Conv2dParams& p, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{fn(p, in[0], in[1], p.bias ? &in[2] : nullptr)};
  });
}

namespace {

// Whether float16 would move input v by up to 2^-25 whatever its size: below its normals (2^-14)
// and off its 2^-24 grid.
inline bool rounds_on_half_grid(double v) {
  const double grid = v * 0x1p24;
  return std::fabs(v) < 0x1p-14 && grid != std::nearbyint(grid);
}

// The input values group g's kernel sees at output position (n, oh, ow), in the weight row's
// order (channel, kh, kw), 0 at padding: K = ICg * KH * KW of them into `window`. Returns whether
// any of them rounds on float16's subnormal grid (rounds_on_half_grid).
bool gather_window(const Conv2dParams& p, const float* x, int64_t n, int64_t g, int64_t oh, int64_t ow, double* window) {
  const int64_t IC = p.x[1], H = p.x[2], W = p.x[3], ICg = p.w[1], KH = p.w[2], KW = p.w[3];
  bool rounds = false;
  // The planes lie H * W apart, so each channel's reads land on another page: they are asked for
  // a few channels ahead, which lets the page walks and cache misses overlap.
  constexpr int64_t kAhead = 8;
  const int64_t ih0 = std::clamp<int64_t>(oh * p.stride_h - p.pad_h, 0, H - 1), iw0 = std::clamp<int64_t>(ow * p.stride_w - p.pad_w, 0, W - 1);
  for (int64_t c = 0; c < ICg; ++c) {
    const float* plane = x + (n * IC + g * ICg + c) * H * W;
    if (c + kAhead < ICg) __builtin_prefetch(plane + kAhead * H * W + ih0 * W + iw0);
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
      for (int64_t kw = 0; kw < KW; ++kw, ++window) {
        const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dil_w;
        *window = ih >= 0 && ih < H && iw >= 0 && iw < W ? double(plane[ih * W + iw]) : 0.0;
        rounds |= rounds_on_half_grid(*window);
      }
    }
  }
  return rounds;
}

// One channel's scales over a gathered window and that channel's weight row (K values). The
// products of two floats are exact in float64; the sums may be reordered into vector lanes,
// which moves them by a few float64 ulps at most. `rounds`: whether some input of the window
// rounds on float16's subnormal grid (gather_window); where none does (nearly every window), the
// sums over the weights of such inputs are 0 and the loop leaves them out: it is run once per
// output channel, and its three sums are the same terms in the same lanes either way.
__attribute__((target_clones("avx512f", "avx2", "default"))) DotScales window_scales(const double* window, const float* w,
                                                                                    int64_t K, double bias, bool rounds) {
  double abs_sum = 0, sum_sq = 0, exact = 0, w_abs = 0, w_sq = 0;
  if (!rounds) {
#pragma omp simd reduction(+ : abs_sum, sum_sq, exact)
    for (int64_t k = 0; k < K; ++k) {
      const double t = window[k] * double(w[k]);
      abs_sum += std::fabs(t);
      sum_sq += t * t;
      exact += t;
    }
    return {abs_sum + std::fabs(bias), sum_sq, exact + bias, 0.0, 0.0};
  }
#pragma omp simd reduction(+ : abs_sum, sum_sq, exact, w_abs, w_sq)
  for (int64_t k = 0; k < K; ++k) {
    const double wk = double(w[k]), t = window[k] * wk;
    abs_sum += std::fabs(t);
    sum_sq += t * t;
    exact += t;
    const bool moved = rounds_on_half_grid(window[k]);
    w_abs += moved ? std::fabs(wk) : 0.0;
    w_sq += moved ? wk * wk : 0.0;
  }
  return {abs_sum + std::fabs(bias), sum_sq, exact + bias, w_abs, w_sq};
}

// The windows the per-element bound has gathered on this thread for one DotProducts (`owner`, a
// number never reused): the elements a compare asks bounds of run through a chunk in (n, oc, oh,
// ow) order, so a position comes back once per channel, and its window (K strided reads, one cache
// line each) is gathered once. At most kKeptValues values are kept; past that they are dropped.
struct GatheredWindows {
  uint64_t owner = 0;
  std::unordered_map<int64_t, size_t> slot;  // (n, group, oh, ow) -> its window's place
  std::vector<double> values;                // the windows, K values each
  std::vector<char> rounds;                  // per window: gather_window's answer
  static constexpr size_t kKeptValues = size_t(1) << 20;
};

// The scales of output element i's dot product (i over N x OC x OH x OW), for DotProducts `owner`.
DotScales conv2d_scales(const Conv2dParams& p, const float* x, const float* w, const float* b, int64_t i, uint64_t owner) {
  const Shape o = p.output_shape();
  const int64_t OW = o[3], OH = o[2], OC = o[1], K = p.reduction_length();
  const int64_t ow = i % OW, oh = (i / OW) % OH, oc = (i / (OW * OH)) % OC, n = i / (OW * OH * OC), g = oc / (OC / p.groups);
  thread_local GatheredWindows kept;
  if (kept.owner != owner || kept.values.size() + size_t(K) > GatheredWindows::kKeptValues) {
    kept.owner = owner, kept.slot.clear(), kept.values.clear(), kept.rounds.clear();
  }
  const int64_t position = ((n * p.groups + g) * OH + oh) * OW + ow;
  auto [at, added] = kept.slot.emplace(position, kept.rounds.size());
  if (added) {
    kept.values.resize(kept.values.size() + size_t(K));
    kept.rounds.push_back(gather_window(p, x, n, g, oh, ow, kept.values.data() + at->second * size_t(K)));
  }
  return window_scales(kept.values.data() + at->second * size_t(K), w + oc * K, K, b ? double(b[oc]) : 0.0, kept.rounds[at->second] != 0);
}

// The scales of every output channel at output position q (over N x OH x OW). Each group's
// window is gathered once and dotted with each of its channels' weight rows: one strided walk
// of the input instead of one per channel.
void conv2d_scales_across(const Conv2dParams& p, const float* x, const float* w, const float* b, int64_t q, DotScales* out) {
  const Shape o = p.output_shape();
  const int64_t OW = o[3], OH = o[2], OC = o[1], K = p.reduction_length();
  const int64_t per_group = OC / p.groups;
  std::vector<double> window(static_cast<size_t>(K));
  for (int64_t g = 0; g < p.groups; ++g) {
    const bool rounds = gather_window(p, x, q / (OW * OH), g, (q / OW) % OH, q % OW, window.data());
    for (int64_t oc = g * per_group; oc < (g + 1) * per_group; ++oc) {
      out[oc] = window_scales(window.data(), w + oc * K, K, b ? double(b[oc]) : 0.0, rounds);
    }
  }
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

std::vector<Defect> conv2d_defects() {
  auto any = [](const Call&, const std::vector<Tensor>&) { return true; };
  std::vector<Defect> d = {
      {"pad", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, [](const Call& call, const std::vector<Tensor>&) { return call.params<Conv2dParams>().pad_h > 0; },
       [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
         // Row ih is read where ih - 1 belongs: the input moved down one row.
         Tensor x(DType::Float32, in[0].shape());
         const int64_t H = x.shape()[2], W = x.shape()[3], planes = x.shape()[0] * x.shape()[1];
         for (int64_t p = 0; p < planes; ++p) {
           std::memcpy(x.mutable_data<float>() + p * H * W + W, in[0].data<float>() + p * H * W, size_t((H - 1) * W) * 4);
         }
         std::vector<Tensor> shifted = in;
         shifted[0] = x;
         return ref(call, shifted);
       }},
      {"bias", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, [](const Call& call, const std::vector<Tensor>&) { return call.params<Conv2dParams>().bias; },
       [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
         std::vector<Tensor> changed = in;
         changed[2] = in[2].clone();
         changed[2].mutable_data<float>()[in[2].numel() / 2] += 0.05f;
         return ref(call, changed);
       }},
      {"ktail", Defect::Strikes::OneCall, Defect::Gives::WrongAnswer, any, [](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
         // The last term of every dot product (the last input channel's last tap) left out.
         std::vector<Tensor> changed = in;
         changed[1] = in[1].clone();
         const Shape& w = in[1].shape();
         const int64_t per_oc = w[1] * w[2] * w[3];
         for (int64_t oc = 0; oc < w[0]; ++oc) changed[1].mutable_data<float>()[oc * per_oc + per_oc - 1] = 0;
         return ref(call, changed);
       }}};
  for (const char* precision : {"tf32", "fp16", "bf16"}) {
    // Inputs and weights rounded, products and sums exact (the reference's float64): TF32
    // tensor cores round the operands and accumulate in float32; float16 and bfloat16 kernels
    // also store their output at that precision.
    d.push_back({precision, Defect::Strikes::EveryCall, Defect::Gives::WrongAnswer, any, [precision = std::string(precision)](const Call& call, const std::vector<Tensor>& in, const OpFn& ref) {
                   std::vector<Tensor> changed = in;
                   changed[0] = rounded(in[0], precision), changed[1] = rounded(in[1], precision);
                   std::vector<Tensor> out = ref(call, changed);
                   if (precision != "tf32") out[0] = rounded(out[0], precision);
                   return out;
                 }});
  }
  return d;
}

}  // namespace

OpTraits conv2d_traits() {
  OpTraits t = traits_for<Conv2dParams>(conv2d_op(conv2d_ref), PARITY_CUDA_OP(conv2d_op(conv2d_cuda)));
  t.examples = {"conv2d x=1x3x64x64 w=32x3x6x6 bias stride=2 pad=2"};
  t.seed_input = [](const Call& call, const TensorSpec& s, const RngStream& rng, double, Tensor& out) {
    if (s.name == "x") return false;
    // PyTorch's default init for conv weights and bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    const double bound = 1.0 / std::sqrt(double(call.params<Conv2dParams>().reduction_length()));
    rng.fill_uniform(out, -bound, bound);
    return true;
  };
  t.dot_products = [](const Call& call, const std::vector<Tensor>& in) {
    const Conv2dParams p = call.params<Conv2dParams>();
    check_inputs(Conv2dParams::kName, p.inputs(), in);
    // The tensors are shared (copies of a Tensor share its storage), so the function stays valid.
    DotProducts d{p.reduction_length(), p.output_shape(), 1, nullptr, nullptr};
    static std::atomic<uint64_t> made{0};
    d.scales = [p, x = in[0], w = in[1], b = p.bias ? in[2] : Tensor(), owner = ++made](int64_t i) {
      return conv2d_scales(p, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr, i, owner);
    };
    d.across_channels = [p, x = in[0], w = in[1], b = p.bias ? in[2] : Tensor()](int64_t q, DotScales* out) {
      conv2d_scales_across(p, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr, q, out);
    };
    return d;
  };
  t.defects = conv2d_defects();
  return t;
}

}  // namespace parity
