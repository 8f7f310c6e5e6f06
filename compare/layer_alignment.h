#pragma once
// Which layer of dump A is which layer of dump B. Two runs of one model record the same calls in
// the same order, except where one run makes a call the other does not: a grid one run builds
// and the other took from a cache (a warm-up before the dump), a cast or a copy one side alone
// needs. Names made of counters ("model.24.mul.5") shift past such a call, so layers are paired
// by what they compute, in order, not by name.
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compare/dump_reader.h"

namespace parity {

struct AlignedLayer {
  std::string key;   // what the layer computes: layers pair only with an equal key...
  std::string name;  // ...or, between two such pairs, with the same name (another call: a finding)
};

// For each layer of A, the index of its twin in B, or -1 when B has none; a layer of B pairs at
// most once. First the longest common subsequence of the keys pairs layers in execution order
// (Myers' diff; beyond `max_edits` insertions and deletions, which only runs that are not of one
// model reach, the keys are not used). The layers left between two such pairs then pair by name,
// in order. Last, layers with the same key and name pair in any order: calls the code ran in
// another order.
std::vector<int64_t> align_layers(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b,
                                  int64_t max_edits = 2048);

// Two dumps and which layer of one is which layer of the other: what a comparison walks.
struct DumpPair {
  const Dump& a;
  const Dump& b;
  std::vector<int64_t> b_of_a, a_of_b;    // the paired layer on the other side, or -1
  std::vector<std::string> canonical[2];  // each layer's call as pairing reads it (canonical_call), by side

  const Dump& side(int s) const { return s == 0 ? a : b; }
  // Layer i of `side`'s twin on the other side, or -1.
  int64_t twin(int side, int64_t i) const { return (side == 0 ? b_of_a : a_of_b)[size_t(i)]; }
};

// Pairs the layers of two dumps by what they compute: the key of each layer is its op, its name
// without the counter that numbers calls of one kind in a scope ("model.24.mul.5"), and its
// canonical call without its input shapes; then align_layers.
DumpPair pair_dumps(const Dump& a, const Dump& b);

// Two canonical calls with the same op and the same fields, whatever their values.
bool same_fields(const std::string& ca, const std::string& cb);
// Two numbers in one call's lines that are the same function of a floating type's constant,
// each of a type its own run used (`types_a`, `types_b`: float16 1, bfloat16 2, float32 4, float64
// 8): the same multiple or power of finfo(dtype).eps, tiny or max, or 1 plus such a multiple
// (`eps * 10`, `min / 2`, `eps ** 0.5`, `1 - eps`), as code that derives a guard or a mask from its
// run's type gives.
bool same_finfo_derivation(double a, unsigned types_a, double b, unsigned types_b);
// The floating types a dump's run used, as same_finfo_derivation's bits.
unsigned float_types(const Dump& d);
// The numbers Python's repr wrote in a call's line, in order ("-0.5", "1e-05", "3").
std::vector<std::string> numbers_in(const std::string& line);
// Two canonical calls that differ only in their numbers (each number, its point and exponent
// included, read as one mark; its sign kept).
bool only_numbers_differ(const std::string& ca, const std::string& cb);
// Two canonical lines of one call that differ only in what the run's data decides: the values of
// tensors written into their arguments (`tensor(3)`, or a clamp's 0 or size in a tensor's place)
// and the shapes of the tensors of `tensor_roles` (`in2=80x50`, `x=4x4`: the inputs a layer made on
// each side, whose shapes may follow the data; a weight's never does).
bool only_data_differs(const std::string& ca, const std::string& cb, const std::set<std::string>& tensor_roles);
// Whether two texts (an argument's, a view's chain) are one but for what the run's data decides:
// the values of tensors written into them (`tensor(3)`, `<tensor>`), and a number facing a tensor
// as a clamp gives it: that tensor's own value, or, at a slice's bound, one of `clamps[side]` (0
// and the sizes of the tensors there) where that side's text holds a tensor too and the tensor
// lies on the clamp's side of it.
bool same_but_tensor_values(const std::string& a, const std::string& b, const std::array<std::set<std::string>, 2>& clamps);
// A canonical line without the shapes of the tensors of `tensor_roles`.
std::string without_tensor_shapes(const std::string& line, const std::set<std::string>& tensor_roles);
// Whether the values of tensors written into two canonical lines' arguments differ.
bool tensors_in_arguments_differ(const std::string& ca, const std::string& cb);

// One line when the two dumps cannot be compared at all: runs of another batch or image size,
// different models (their manifests say so and fewer than half of A's layers run the same call in
// B), or no layer in common (no layer of A has a namesake in B running the identical call). The
// table would only be a chain of "another call" or shape rows. "" otherwise, and for a single
// layer, whose own row says it.
std::string not_comparable(const Dump& a, const Dump& b);

}  // namespace parity
