// The bounds S and K of the calls the judge runs again (kernels/aten/torch_bounds.h): how many
// terms an output sums, and each output's sum of its terms' sizes, from the call's own arguments.
#include "kernels/aten/torch_bounds.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/ones_like.h>

#include <cmath>
#include <optional>

#include "core/error.h"

namespace parity {

size_t sampled_input(const std::string& name) { return name == "deform_conv2d" ? 2 : 1; }

int64_t sum_terms(const std::string& name, const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y) {
  const at::Tensor& x = wide.at(0);
  if (name == "linear" || name == "matmul" || name == "mm" || name == "bmm") return x.size(-1);
  if (name == "addmm" || name == "baddbmm" || name == "addmv") return wide.at(1).size(-1);
  // addbmm(input, batch1, batch2): every batch's products summed into one matrix, and the input.
  if (name == "addbmm" && wide.at(1).dim() == 3) return wide[1].size(0) * wide[1].size(2) + 1;
  if (name == "addr" || name == "cross") return 2;  // the input plus an outer product; a2 b3 - a3 b2
  // A row of theta times (x, y[, z], 1), and each coordinate's own few roundings (affine_grid_sums).
  if (name == "affine_grid") return 2 * (y.size(-1) + 1);
  if (name == "bincount") return std::max<int64_t>(1, x.numel());  // every weight into one bin
  if (name == "embedding_bag" && wide.size() > 1) return std::max<int64_t>(1, wide[1].numel());  // every index in one bag
  // index_put with accumulate: self plus at most every value put (all at one index).
  if (name == "index_put") {
    int64_t n = 1;
    for (size_t k = 1; k < wide.size(); ++k) n += wide[k].is_floating_point() ? wide[k].numel() : 0;
    return n;
  }
  // A product of two operands contracted over K elements and nothing else (no batch dims):
  // |y| = (|x| / K)(|w| / K), so K = sqrt(|x| |w| / |y|) (1 for an outer product).
  if ((name == "mv" || name == "dot" || name == "vdot" || name == "inner" || name == "outer" || name == "ger" || name == "tensordot") &&
      wide.size() > 1) {
    const double k = std::sqrt(double(x.numel()) * double(wide[1].numel()) / double(std::max<int64_t>(1, y.numel())));
    return std::max<int64_t>(1, int64_t(std::llround(k)));
  }
  // F.fold: an output element sums the patches that cover it, at most the kernel's size of them.
  if (name == "fold") {
    const auto sizes = int_list(text_arg(args, 2, "kernel_size"));
    const std::string one = text_arg(args, 2, "kernel_size");
    if (sizes && !sizes->empty()) return std::max<int64_t>(1, (*sizes)[0] * (*sizes)[sizes->size() > 1 ? 1 : 0]);
    if (integral_text(one)) return std::max<int64_t>(1, std::stoll(one) * std::stoll(one));
  }
  // x1^T A x2 + b over A's (out, in1, in2): in1 in2 products and the bias.
  if (name == "bilinear" && wide.size() > 2 && wide[2].dim() == 3) return wide[2].size(1) * wide[2].size(2) + 1;
  // self plus what is scattered onto an element: at most the index's size along dim (scatter_add)
  // or its length (index_add).
  if ((name == "scatter_add" || name == "scatter_reduce" || name == "index_add") && wide.size() > 1) {
    const std::string dim = text_arg(args, 1, "dim");
    const at::Tensor& index = wide[1];
    if (name == "index_add") return index.numel() + 1;
    if (integral_text(dim) && index.dim() > 0) return index.size((std::stoll(dim) % index.dim() + index.dim()) % index.dim()) + 1;
  }
  // A convolution's weight: (out, in / groups, k...), transposed (in, out / groups, k...).
  if (name.rfind("conv_transpose", 0) == 0 && wide.size() > 1) return wide[1].numel() / std::max<int64_t>(1, wide[1].size(1));
  if (name.rfind("conv", 0) == 0 && wide.size() > 1) return wide[1].numel() / std::max<int64_t>(1, wide[1].size(0));
  if ((name == "cumsum" || name == "cumprod") && !args.positional.empty()) {
    const Operand* dim = args.positional.size() > 1 ? &args.positional[1] : nullptr;
    if (const auto it = args.keywords.find("dim"); it != args.keywords.end()) dim = &it->second;
    if (dim && integral_text(dim->text) && x.dim() > 0) return x.size((std::stoll(dim->text) + x.dim()) % x.dim());
  }
  if (name == "einsum") return std::max<int64_t>(1, x.numel());  // the largest contraction it can be
  const int64_t spatial = std::max<int64_t>(1, x.dim() - 2);
  if (name == "upsample_bicubic2d") return 16;
  // Antialiased resizing (F.interpolate(..., antialias=True)): a filter as wide as the scale when
  // it shrinks, so an output mixes up to 3 times the inputs per output along each axis, squared
  // (9 for bilinear's triangle), and 4 times that for bicubic's wider kernel.
  if (name == "_upsample_bilinear2d_aa" || name == "_upsample_bicubic2d_aa") {
    const int64_t per_output = (x.numel() + y.numel() - 1) / std::max<int64_t>(1, y.numel());
    return (name == "_upsample_bicubic2d_aa" ? 36 : 9) * std::max<int64_t>(1, per_output) + 4;
  }
  if (name.rfind("upsample_", 0) == 0) return int64_t(1) << spatial;
  // A deformable convolution (input, weight, offset, mask, bias, ...): each tap of the weight a
  // bilinear mix of 4 inputs at its offset place, and the bias.
  if (name == "deform_conv2d" && wide.size() > 1 && wide[1].dim() == 4) return 4 * (wide[1].numel() / std::max<int64_t>(1, wide[1].size(0))) + 1;
  // ps_roi_pool averages a bin of the map, which a box larger than the map makes the whole map.
  if (name == "ps_roi_pool" && x.dim() == 4) return x.size(2) * x.size(3);
  // (input, rois, spatial_scale, pooled_h, pooled_w, sampling_ratio[, aligned]): ps_roi_align's
  // bins sample as roi_align's do, each from its own channel.
  if ((name == "roi_align" || name == "ps_roi_align") && x.dim() == 4) {
    const std::string ph = text_arg(args, 3, "pooled_height"), pw = text_arg(args, 4, "pooled_width");
    const std::string ratio = text_arg(args, 5, "sampling_ratio");
    if (!integral_text(ph) || !integral_text(pw) || !integral_text(ratio)) throw Error("roi_align's sizes are not recorded");
    const int64_t r = std::stoll(ratio);  // samples per bin and dimension; adaptive (<= 0): up to a bin's size
    const int64_t sh = r > 0 ? r : x.size(2) / std::max<int64_t>(1, std::stoll(ph)) + 2;
    const int64_t sw = r > 0 ? r : x.size(3) / std::max<int64_t>(1, std::stoll(pw)) + 2;
    return 4 * sh * sw;  // each sample a bilinear mix of 4 inputs, averaged
  }
  if (name == "grid_sampler") {  // (input, grid, mode: 0 bilinear, 1 nearest, 2 bicubic, ...)
    const std::string mode = text_arg(args, 2, "interpolation_mode");
    if (mode == "2") throw Error("grid_sample's bicubic weights take both signs: no bound for it is known here");
    return mode == "1" ? 1 : int64_t(1) << spatial;
  }
  if (name.rfind("avg_pool", 0) == 0) {
    const Operand* kernel = args.positional.size() > 1 ? &args.positional[1] : nullptr;
    if (const auto it = args.keywords.find("kernel_size"); it != args.keywords.end()) kernel = &it->second;
    const auto sizes = kernel ? int_list(kernel->text) : std::nullopt;
    if (sizes && !sizes->empty()) {
      int64_t k = 1;
      for (size_t d = 0; d < size_t(spatial); ++d) k *= (*sizes)[sizes->size() == 1 ? 0 : std::min(d, sizes->size() - 1)];
      return std::max<int64_t>(1, k);
    }
  }
  if (name.rfind("adaptive_avg_pool", 0) == 0 && y.dim() == x.dim()) {
    int64_t k = 1;  // a window spans at most ceil(in / out) + 1 inputs along each dimension
    for (int64_t d = x.dim() - spatial; d < x.dim(); ++d) k *= (x.size(d) + y.size(d) - 1) / std::max<int64_t>(1, y.size(d)) + 1;
    return k;
  }
  return std::max<int64_t>(1, x.numel() / std::max<int64_t>(1, y.numel()));
}

// Each output of affine_grid is a row of theta times (x, y[, z], 1), the base grid's coordinates
// in [-1, 1], of both signs: the call on |theta| bounds nothing. A kernel makes the coordinates
// with linspace in its own type, each off by a few roundings of 1 (the step's rounding, times the
// steps from the nearer end), not of itself: S is the row's |theta| summed, as if every
// coordinate were 1.
at::Tensor affine_grid_sums(const std::vector<at::Tensor>& t, const at::Tensor& y) {
  const at::Tensor& theta = t.at(0);
  const int64_t spatial = y.dim() - 2;
  if ((spatial != 2 && spatial != 3) || theta.dim() != 3 || theta.size(1) != spatial || theta.size(2) != spatial + 1 || y.size(-1) != spatial)
    throw Error("affine_grid's theta and grid do not match");
  std::vector<int64_t> row(size_t(y.dim()), 1);
  row.front() = theta.size(0), row.back() = spatial;
  return theta.abs().sum(-1).view(row).expand(y.sizes());
}

// layer_norm's S (normalisation_sums), its groups the last dimensions.
at::Tensor layer_norm_sums(const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const auto shape = args.positional.size() > 1 ? int_list(args.positional[1].text) : std::nullopt;
  if (!shape) throw Error("layer_norm's normalized_shape is not recorded as a list");
  const int64_t dims = int64_t(shape->size());
  K = 1;
  for (const int64_t d : *shape) K *= d;
  std::vector<int64_t> reduce;
  for (int64_t d = x.dim() - dims; d < x.dim(); ++d) reduce.push_back(d);
  double eps = 1e-5;
  if (args.positional.size() > 4) eps = python_number(args.positional[4].text).value_or(eps);
  if (const auto it = args.keywords.find("eps"); it != args.keywords.end()) eps = python_number(it->second.text).value_or(eps);
  const auto w = tensor_arg(args, t, 2, "weight"), b = tensor_arg(args, t, 3, "bias");
  return normalisation_sums(x, x, reduce, eps, w ? w->abs() : at::ones({}, x.options()),
                            b ? std::optional<at::Tensor>(b->abs()) : std::nullopt, y);
}

// group_norm(input, num_groups, weight, bias, eps) and instance_norm(input, weight, bias,
// running_mean, running_var, use_input_stats, momentum, eps): layer_norm's S over each group of K
// values (a channel's, for instance_norm), the affine step per channel. instance_norm on running
// statistics is element-wise: S = |y|, K = 0.
at::Tensor group_norm_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  if (x.dim() < 2) throw Error(name + " of a tensor of fewer than 2 dimensions");
  const bool group = name == "group_norm";
  int64_t groups = x.size(1);
  if (group) {
    const std::string g = text_arg(args, 1, "num_groups");
    if (!integral_text(g) || std::stoll(g) < 1 || x.size(1) % std::stoll(g)) throw Error("group_norm's num_groups is not recorded");
    groups = std::stoll(g);
  } else if (text_arg(args, 5, "use_input_stats") == "False") {
    K = 0;
    return y.abs();
  }
  const double eps = python_number(text_arg(args, group ? 4 : 7, "eps")).value_or(1e-5);
  const at::Tensor g = x.reshape({x.size(0), groups, -1});
  K = g.size(2);
  std::vector<int64_t> per_channel(size_t(x.dim()), 1);
  per_channel[1] = x.size(1);
  const auto w = tensor_arg(args, t, group ? 2 : 1, "weight"), b = tensor_arg(args, t, group ? 3 : 2, "bias");
  return normalisation_sums(x, g, {2}, eps, w ? w->abs().reshape(per_channel) : at::ones({}, x.options()),
                            b ? std::optional<at::Tensor>(b->abs().reshape(per_channel)) : std::nullopt, y);
}

// var, std, var_mean, std_mean(input, dim, unbiased | correction=, keepdim): output k's S and K.
// A variance over N values with correction c is sum (x - m)^2 / (N - c); a float32 kernel (two
// passes, or Welford's) strays by about N roundings of the terms it sums, each no larger than x^2:
// S = sum x^2 / (N - c), K = N + 8. A deviation is its square root: an error E in the variance v
// moves it by at most E / sqrt(v), and by at most sqrt(E) wherever v is within 16 E of 0; its S is
// that over the smallest scale a float32 bound has, (K + 2) 2^-24 (a coarser profile's larger scale
// only widens it). The mean of var_mean and std_mean is a sum of N terms: S = mean |x|, K = N.
at::Tensor moment_sums(const std::string& name, const Args& args, const at::Tensor& x, const at::Tensor& y, size_t k, int64_t& K) {
  const int64_t N = x.numel() / std::max<int64_t>(1, y.numel());
  std::vector<int64_t> dims;
  double correction = 1;
  const std::string second = args.positional.size() > 1 ? args.positional[1].text : "";
  if (second == "True" || second == "False") {
    correction = second == "True" ? 1 : 0;  // var(input, unbiased)
  } else {
    const std::string dim = text_arg(args, 1, "dim");
    if (const auto d = int_list(dim)) dims = *d;
    const std::string unbiased = text_arg(args, 2, "unbiased");
    if (unbiased == "False") correction = 0;
    if (const auto it = args.keywords.find("correction"); it != args.keywords.end()) correction = python_number(it->second.text).value_or(1);
  }
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  K = N + 8;
  const bool mean_output = k == 1;
  const at::Tensor per = mean_output ? x.abs().mean(dims, true) : x.pow(2).sum(dims, true) / std::max(1.0, double(N) - correction);
  if (y.numel() != per.numel()) throw Error(name + "'s reduced dimensions are not recorded");
  at::Tensor S = per.reshape(y.sizes());
  if (mean_output) {
    K = N;
    return S;
  }
  if (name.rfind("std", 0) != 0) return S;
  const double g = double(K + 2) * std::ldexp(1.0, -24);
  const at::Tensor v = y.pow(2);  // y is the deviation
  return at::where(v >= 16 * g * S, S / v.sqrt(), (S / g).sqrt());
}

// A recurrent layer (lstm, gru, rnn_tanh, rnn_relu: input, hx, params, has_biases, num_layers,
// dropout, train, bidirectional, batch_first): its time steps times its layers and directions. A
// cell (lstm_cell...: input, hx, w_ih, w_hh, b_ih, b_hh) is one step of one layer.
int64_t recurrent_steps(const std::string& name, const Args& args, const at::Tensor& x) {
  if (name.size() > 5 && name.compare(name.size() - 5, 5, "_cell") == 0) return 1;
  const std::string layers = text_arg(args, 4, "num_layers");
  const bool batch_first = text_arg(args, 8, "batch_first") == "True", both = text_arg(args, 7, "bidirectional") == "True";
  const int64_t steps = x.dim() == 3 ? x.size(batch_first ? 1 : 0) : x.dim() > 0 ? x.size(0) : 1;
  return std::max<int64_t>(1, steps * (integral_text(layers) ? std::stoll(layers) : 1) * (both ? 2 : 1));
}

// cross(a, b, dim): each output a_j b_k - a_k b_j, two products that may cancel: S = |a_j b_k| +
// |a_k b_j|. No dim (torch.cross's old default): the first of size 3.
at::Tensor cross_sums(const Args& args, const std::vector<at::Tensor>& t) {
  const std::vector<at::Tensor> ab = at::broadcast_tensors({t.at(0).abs(), t.at(1).abs()});
  std::optional<int64_t> first3;
  for (int64_t d = 0; d < ab[0].dim() && !first3; ++d) {
    if (ab[0].size(d) == 3) first3 = d;
  }
  const int64_t d = dim_arg(args, 2, "dim", ab[0], first3, "cross");
  return ab[0].roll(-1, d) * ab[1].roll(-2, d) + ab[0].roll(-2, d) * ab[1].roll(-1, d);
}

// A sum of terms of one sign (Positive): an output element's terms, each within a rounding or two
// of itself (a difference of two inputs is rounded relative to itself, then squared, made absolute
// or smoothed), so the sum strays by K + 2 roundings of itself. cdist's Euclidean distance by
// matrix products (|x|^2 + |y|^2 - 2 x.y, PyTorch's path where either side has more than 25 rows)
// cancels instead: its squared distance strays by K + 2 roundings of Q = (|x| + |y|)^2, which moves
// the distance r by at most that over r, or its square root where r is near 0 (S over float32's
// unit, as moment_sums does for a deviation).
at::Tensor positive_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  int64_t numel = x.numel();
  for (const at::Tensor& o : t) numel = std::max<int64_t>(numel, o.is_floating_point() ? o.numel() : 0);
  K = std::max<int64_t>(1, numel / std::max<int64_t>(1, y.numel()));
  if (name == "pairwise_distance") K = x.dim() > 0 ? x.size(-1) : 1;
  if (name == "renorm") K = std::max<int64_t>(1, x.numel() / std::max<int64_t>(1, x.size(dim_arg(args, 2, "dim", x, std::nullopt, name))));
  if (name != "cdist") return y.abs();
  if (t.size() < 2 || x.dim() < 2) throw Error("cdist's inputs are not recorded as matrices");
  K = x.size(-1);
  const std::optional<double> p = python_number(text_arg(args, 2, "p"));
  const std::string mode = text_arg(args, 3, "compute_mode");  // as ATen numbers it: None, 1 always, 2 never
  const bool rows = x.size(-2) > 25 || t[1].size(-2) > 25;
  const bool mm = p.value_or(2.0) == 2.0 && mode != "2" && (rows || mode == "1");
  if (!mm) return y.abs();
  const at::Tensor Q = (x.norm(2, -1).unsqueeze(-1) + t[1].norm(2, -1).unsqueeze(-2)).pow(2);
  const double unit = double(K + 2) * std::ldexp(1.0, -24);
  return at::minimum(Q / y.abs().clamp_min(1e-300), (Q / unit).sqrt());
}

namespace {
// A loss's S from its terms' sizes: reduced as the call reduces (`reduction` as Python names it:
// 'none' keeps them, 'sum', 'batchmean' over x's first dim, else the mean over `count`), plus |y|.
at::Tensor reduced_terms(const at::Tensor& terms, const std::string& reduction, int64_t count, const at::Tensor& x, const at::Tensor& y) {
  if (reduction == "'none'") return terms.expand_as(y) + y.abs();
  at::Tensor total = terms.sum();
  if (reduction == "'batchmean'") {
    if (x.dim() > 0) total = total / double(std::max<int64_t>(1, x.size(0)));
  } else if (reduction != "'sum'") {
    total = total / double(std::max<int64_t>(1, count));
  }
  return total.expand_as(y) + y.abs();
}
}  // namespace

// The margin and ranking losses (LossTerms): each term a clamp or a log of a few operands' sum,
// within a few roundings of their sizes, reduced as the call reduces: S is that reduction of the
// sizes, plus |y|. margin_ranking max(0, -t (x1 - x2) + m): |x1| + |x2| + |m|; hinge_embedding x
// or max(0, m - x): |x| + |m|; soft_margin log(1 + exp(-t x)): |t x| + 1; cosine_embedding 1 - cos
// or max(0, cos - m), cos over D: 1 + |m|; triplet_margin max(d(a, p) - d(a, n) + m, 0), each d
// within D roundings of itself: d(a, p) + d(a, n) (+ d(p, n) with swap) + |m|; poisson_nll
// exp(x) - t x (log_input) or x - t log(x + eps): exp(x) + |t x| or |x| + |t log(x + eps)|, plus
// Stirling's term where full; multi_margin's mean over C classes of max(0, m - x_y + x_i)^p:
// (|m| + |x_y| + |x_i|)^p over C, times the class's weight. K: the terms summed, the dims reduced.
at::Tensor loss_term_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                          const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const auto number = [&](size_t pos, const char* key, double fallback) { return python_number(text_arg(args, pos, key)).value_or(fallback); };
  at::Tensor terms;
  int64_t D = 1;
  if (name == "margin_ranking_loss" && t.size() >= 2) {
    terms = x.abs() + t[1].abs() + std::fabs(number(3, "margin", 0));
  } else if (name == "hinge_embedding_loss") {
    terms = x.abs() + std::fabs(number(2, "margin", 1));
  } else if (name == "soft_margin_loss" && t.size() >= 2) {
    terms = (x * t[1]).abs() + 1;
  } else if (name == "cosine_embedding_loss" && t.size() >= 2) {
    D = x.dim() > 0 ? x.size(-1) : 1;
    terms = at::ones(x.dim() > 1 ? x.sizes().slice(0, x.dim() - 1) : at::IntArrayRef{}, x.options()) * (1 + std::fabs(number(3, "margin", 0)));
  } else if (name == "triplet_margin_loss" && t.size() >= 3) {
    D = x.dim() > 0 ? x.size(-1) : 1;
    const double p = number(4, "p", 2), eps = number(5, "eps", 1e-6);
    terms = at::pairwise_distance(x, t[1], p, eps) + at::pairwise_distance(x, t[2], p, eps) + std::fabs(number(3, "margin", 1));
    if (text_arg(args, 6, "swap") == "True") terms = terms + at::pairwise_distance(t[1], t[2], p, eps);
  } else if (name == "poisson_nll_loss" && t.size() >= 2) {
    const bool log_input = text_arg(args, 2, "log_input") != "False";
    terms = log_input ? x.exp() + (t[1] * x).abs() : x.abs() + (t[1] * (x + number(4, "eps", 1e-8)).log()).abs();
    if (text_arg(args, 3, "full") == "True") terms = terms + (t[1] * t[1].clamp_min(1).log()).abs() + t[1].abs() + 0.5 * (2 * M_PI * t[1].clamp_min(1)).log();
  } else if (name == "multi_margin_loss" && t.size() >= 2 && x.dim() >= 1) {
    D = x.size(-1);
    const double p = number(2, "p", 1), m = std::fabs(number(3, "margin", 1));
    const at::Tensor rows = x.dim() == 1 ? x.unsqueeze(0) : x;
    const at::Tensor picked = rows.gather(1, t[1].reshape({-1, 1}).to(at::kLong)).abs();
    at::Tensor each = (m + picked + rows.abs()).pow(p);
    if (const auto w = tensor_arg(args, t, 4, "weight")) each = each * w->abs().index_select(0, t[1].reshape({-1}).to(at::kLong)).unsqueeze(1);
    terms = each.sum(1) / double(D);
    if (x.dim() == 1) terms = terms.squeeze(0);
  } else {
    throw Error(name + ": its operands are not recorded as its bound needs");
  }
  K = (reduction == "'none'" ? 1 : std::max<int64_t>(1, terms.numel())) + D + 6;
  return reduced_terms(terms, reduction, terms.numel(), x, y);
}

// Cross entropy and its binary and KL forms (LogLoss): a mean or sum of N terms of one sign, each
// a log's result within a few roundings of itself and of 1 (a log of a rounded argument strays by
// a rounding absolute). cross_entropy's term is log_softmax over C classes: K = C + N + 4.
// binary_cross_entropy_with_logits' term also sums |x| (x·(1 - t) plus log(1 + exp(-x))). kl_div's
// terms t·(log t - x) take both signs: S is their sizes |t|·(|log t| + |x|), reduced as the call.
// A weight scales each term by at most its largest size. `reduction` as Python named it ('mean').
at::Tensor log_loss_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                         const at::Tensor& y, int64_t& K) {
  const at::Tensor& x = t.at(0);
  const bool reduced = y.numel() == 1 && x.numel() > 1 && reduction != "'none'";
  if (name == "kl_div") {
    if (t.size() < 2) throw Error("kl_div's target is not recorded");
    const bool log_target = text_arg(args, 99, "log_target") == "True";
    const at::Tensor p = log_target ? t[1].exp() : t[1];
    const at::Tensor logp = log_target ? t[1].abs() : at::where(p == 0, at::zeros_like(p), p.abs().log().abs());
    const at::Tensor terms = p.abs() * (logp + x.abs()) + p.abs();
    K = (reduced ? x.numel() : 1) + 4;
    return reduced_terms(terms, reduction, x.numel(), x, y);
  }
  double scale = 1.0;
  for (const char* key : {"weight", "pos_weight"}) {
    const auto it = args.keywords.find(key);
    if (it != args.keywords.end() && it->second.tensor) scale *= std::max(1.0, t.at(*it->second.tensor).abs().max().item<double>());
  }
  if (name == "cross_entropy") {
    const int64_t C = x.dim() > 1 ? x.size(1) : x.numel();
    K = C + (reduced ? x.numel() / std::max<int64_t>(1, C) : 1) + 4;
    return y.abs() + scale;
  }
  K = (reduced ? x.numel() : 1) + 6;
  const double logits = name == "binary_cross_entropy_with_logits" ? 2.0 * (reduced ? x.abs().mean().item<double>() : 0.0) : 0.0;
  at::Tensor S = y.abs() + scale * (1.0 + logits);
  if (name == "binary_cross_entropy_with_logits" && !reduced) S = S + 2.0 * scale * x.abs().expand_as(y);
  return S;
}

// A normalisation's S: with mean m, deviation s and z_i = (x_i - m) / s over each group of K values
// (`grouped`: x's values, each group along `reduce`), |w_i| (mean|x| / s + 2 |z_i| + 1) + |b_i| +
// |y_i| bounds what the statistics' rounding (mean off by up to K u mean|x|, s relatively by about
// K u) and the affine step do to y_i. `w` and `b`: their magnitudes, shaped to broadcast over x.
at::Tensor normalisation_sums(const at::Tensor& x, const at::Tensor& grouped, at::IntArrayRef reduce, double eps, const at::Tensor& w,
                              const std::optional<at::Tensor>& b, const at::Tensor& y) {
  const at::Tensor mean = grouped.mean(reduce, true), s = ((grouped - mean).pow(2).mean(reduce, true) + eps).sqrt();
  const at::Tensor z = ((grouped - mean) / s).abs().reshape(x.sizes());
  const at::Tensor spread = (grouped.abs().mean(reduce, true) / s).expand_as(grouped).reshape(x.sizes());
  at::Tensor S = (spread + 2 * z + 1) * w;
  if (b) S = S + *b;
  return S + y.abs();
}

// The dims a torch.fft call transforms, wrapped into [0, rank): (input, n or s, dim, norm). The
// one-dimensional transforms (fft, rfft, ihfft...) default to the last dim, fft2 and its kin to the
// last two, fftn and its kin to the last len(s) or every dim.
std::vector<int64_t> fourier_dims(const std::string& name, const Args& args, int64_t rank) {
  const std::string dim = text_arg(args, 2, "dim");
  std::vector<int64_t> dims;
  if (!dim.empty() && dim != "None") {
    const auto listed = integral_text(dim) ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{std::stoll(dim)}) : int_list(dim);
    if (!listed) throw Error(name + "'s dim is not recorded");
    dims = *listed;
  } else if (name.back() == '2') {
    dims = {-2, -1};
  } else if (name.back() == 'n') {
    const std::string s = text_arg(args, 1, "s");
    const auto sizes = s.empty() || s == "None" ? std::nullopt : int_list(s);
    for (int64_t d = sizes ? rank - int64_t(sizes->size()) : 0; d < rank; ++d) dims.push_back(d);
  } else {
    dims = {-1};
  }
  for (int64_t& d : dims) {
    if (d < -rank || d >= rank) throw Error(name + "'s dim " + std::to_string(d) + " is not one of its input's");
    d = d < 0 ? d + rank : d;
  }
  return dims;
}

// istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
// return_complex): each frame's inverse transform within the Fourier bound of its 2-norm (the
// spectrum's by Parseval: over sqrt(n_fft) unless normalized, at most sqrt(2) times a half
// spectrum's), windowed and added over the frames that cover a sample, over their window's
// envelope: S is that sum of |window| times each frame's norm, over the envelope, plus |y|; K the
// transform's and the overlap's terms.
at::Tensor istft_sums(const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y, int64_t& K) {
  const std::string n_text = text_arg(args, 1, "n_fft");
  if (!integral_text(n_text) || wide.empty() || !wide[0].is_complex() || wide[0].dim() < 2) throw Error("istft's n_fft or input is not recorded as one");
  const int64_t n_fft = std::stoll(n_text);
  const std::string win_text = text_arg(args, 3, "win_length"), hop_text = text_arg(args, 2, "hop_length");
  const int64_t win_length = integral_text(win_text) ? std::stoll(win_text) : n_fft;
  const int64_t hop = integral_text(hop_text) ? std::stoll(hop_text) : std::max<int64_t>(1, win_length / 4);
  const at::Tensor spectra = wide[0].dim() == 2 ? wide[0].unsqueeze(0) : wide[0];  // (batch, frequencies, frames)
  const std::string onesided_text = text_arg(args, 7, "onesided");
  const bool onesided = onesided_text == "True" || ((onesided_text.empty() || onesided_text == "None") && spectra.size(1) != n_fft);
  const bool normalized = text_arg(args, 6, "normalized") == "True", center = text_arg(args, 5, "center") != "False";
  at::Tensor w = at::ones({win_length}, spectra.options().dtype(at::kDouble));
  if (const auto given = tensor_arg(args, wide, 4, "window")) w = given->abs().to(at::kDouble);
  if (w.size(0) < n_fft) w = at::constant_pad_nd(w, {(n_fft - w.size(0)) / 2, n_fft - w.size(0) - (n_fft - w.size(0)) / 2});
  const at::Tensor norms = spectra.abs().pow(2).sum(1).sqrt() * (onesided ? std::sqrt(2.0) : 1.0) / (normalized ? 1.0 : std::sqrt(double(n_fft)));
  const int64_t frames = spectra.size(2), total = n_fft + hop * (frames - 1);
  at::Tensor spread = at::zeros({spectra.size(0), total}, norms.options()), envelope = at::zeros({total}, norms.options());
  for (int64_t f = 0; f < frames; ++f) {
    spread.narrow(1, f * hop, n_fft).add_(w.unsqueeze(0) * norms.narrow(1, f, 1));
    envelope.narrow(0, f * hop, n_fft).add_(w * w);
  }
  const int64_t start = center ? n_fft / 2 : 0;
  const std::string length = text_arg(args, 8, "length");
  const int64_t end = integral_text(length) ? start + std::stoll(length) : center ? total - n_fft / 2 : total;
  if (end > total) {  // istft pads with zeros past the frames: nothing there to bound
    spread = at::constant_pad_nd(spread, {0, end - total});
    envelope = at::constant_pad_nd(envelope, {0, end - total}, 1.0);
  }
  const at::Tensor S = spread.narrow(1, start, end - start) / envelope.narrow(0, start, end - start).clamp_min(1e-300);
  K = 2 * int64_t(std::ceil(std::log2(double(std::max<int64_t>(2, n_fft))))) + 8 + (n_fft + hop - 1) / hop;
  return S.reshape(y.sizes()) + y.abs();
}

}  // namespace parity
