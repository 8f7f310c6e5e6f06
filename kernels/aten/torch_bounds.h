#pragma once
// The bounds of the calls the judge runs again (aten/torch_bounds.cpp), from each call's own
// arguments: K, how many terms an output element sums, and S, the sum of their sizes, per output
// element; a correct float32 result is within about K units of S. For the aten plugin only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "kernels/aten/torch_args.h"

namespace parity {

// The input that says where a call with the `samples` flag samples: deform_conv2d's offsets
// (input 2), else input 1 (roi_align's boxes, grid_sample's grid).
size_t sampled_input(const std::string& name);

// How many terms an output element of a Sum-bound call adds: from the call's own arguments where
// they say (a matrix product's inner size, a pool's window, an interpolation's corners), else the
// input's elements per output element (sum, mean). `wide`: the call's tensors in float64.
int64_t sum_terms(const std::string& name, const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y);

// S of a normalisation over its statistics' groups; K set to the group's size.
at::Tensor layer_norm_sums(const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K);
at::Tensor group_norm_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K);
// A normalisation's S (layer_norm's, group_norm's): x normalised over `reduce` of `grouped` (x's
// values, each group along reduce), with |weight| and |bias| shaped to broadcast.
at::Tensor normalisation_sums(const at::Tensor& x, const at::Tensor& grouped, at::IntArrayRef reduce, double eps, const at::Tensor& w,
                              const std::optional<at::Tensor>& b, const at::Tensor& y);
// S of var, std and their kin (the k-th moment about the mean); K set to the terms reduced.
at::Tensor moment_sums(const std::string& name, const Args& args, const at::Tensor& x, const at::Tensor& y, size_t k, int64_t& K);
// A recurrent layer's time steps times its layers and directions; a cell's, one.
int64_t recurrent_steps(const std::string& name, const Args& args, const at::Tensor& x);
// cross(a, b, dim)'s S: the sizes of its two products.
at::Tensor cross_sums(const Args& args, const std::vector<at::Tensor>& t);
// affine_grid(theta, size)'s S: each row of |theta| summed, the base grid's coordinates taken as 1.
at::Tensor affine_grid_sums(const std::vector<at::Tensor>& t, const at::Tensor& y);
// S of a call whose terms are all of one sign (distances, l1/mse/smooth-l1/huber losses).
at::Tensor positive_sums(const std::string& name, const Args& args, const std::vector<at::Tensor>& t, const at::Tensor& y, int64_t& K);
// S of the margin and ranking losses, reduced as the call reduces (`reduction`).
at::Tensor loss_term_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                          const at::Tensor& y, int64_t& K);
// S of cross entropy, binary cross entropy (with logits) and kl_div.
at::Tensor log_loss_sums(const std::string& name, const Args& args, const std::string& reduction, const std::vector<at::Tensor>& t,
                         const at::Tensor& y, int64_t& K);
// The dims a torch.fft call transforms, wrapped into [0, rank).
std::vector<int64_t> fourier_dims(const std::string& name, const Args& args, int64_t rank);
// istft's S: every frame's overlap-add into an output sample; K set to the terms.
at::Tensor istft_sums(const Args& args, const std::vector<at::Tensor>& wide, const at::Tensor& y, int64_t& K);

}  // namespace parity
