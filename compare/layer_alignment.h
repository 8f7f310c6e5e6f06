#pragma once
// Which layer of dump A is which layer of dump B. Two runs of one model record the same calls in
// the same order, except where one run makes a call the other does not: a grid one run builds
// and the other took from a cache (a warm-up before the dump), a cast or a copy one side alone
// needs. Names made of counters ("model.24.mul.5") shift past such a call, so layers are paired
// by what they compute, in order, not by name.
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace parity
