#include "compare/data_flow.h"

#include <cstdlib>

#include "core/stats.h"

namespace parity {

namespace {
constexpr int64_t kReadValuesKept = 4096;  // elements of one output read into Python, at most

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}
}  // namespace

DataFlow::DataFlow(const DumpPair& p) : p_(p) {
  for (int side = 0; side < 2; ++side) {
    const size_t n = p.side(side).layers.size();
    up_[side].assign(n, -1);
    differs_[side].assign(n, 0);
    steers_[side].assign(n, 0);
    after_steering_[side].assign(n, 0);
  }
}

int64_t DataFlow::upstream(int side, int64_t i) const {
  const DumpLayer& l = p_.side(side).layers[size_t(i)];
  int64_t best = -1;
  bool unknown = l.inputs.empty();
  for (const DumpTensorInfo& t : l.inputs) {
    if (t.source_layer >= 0) {
      const int64_t u = up_[side][size_t(t.source_layer)];
      if (u >= 0 && (best < 0 || u < best)) best = u;
    } else if (!t.source.empty()) {
      unknown = true;
    }
  }
  if (unknown && !origin_names_.empty()) best = 0;
  return best;
}

std::string DataFlow::steering_source(int side, int64_t i) const { return input_from(side, i, after_steering_); }

std::string DataFlow::steered_input(int side, int64_t i) const { return input_from(side, i, steers_); }

std::string DataFlow::input_from(int side, int64_t i, const std::vector<char> (&marked)[2]) const {
  for (const DumpTensorInfo& t : p_.side(side).layers[size_t(i)].inputs) {
    if (t.source_layer >= 0 && marked[side][size_t(t.source_layer)]) return t.source;
  }
  return "";
}

void DataFlow::record(int side, int64_t i, bool differs, int64_t origin, bool steers) {
  differs_[side][size_t(i)] = differs;
  steers_[side][size_t(i)] = steers;
  steered_so_far_ = steered_so_far_ || steers;
  for (const DumpTensorInfo& o : p_.side(side).layers[size_t(i)].outputs) {
    if (o.to_python && count(o.shape) <= kReadValuesKept) {  // .item(), float(t), a short .tolist()
      reads_[side].push_back(&o);
    }
  }
  after_steering_[side][size_t(i)] = steers || !steering_source(side, i).empty();
  up_[side][size_t(i)] = origin;
}

void DataFlow::load_reads(int side) const {
  for (size_t k = read_in_order_[side].size(); k < reads_[side].size(); ++k) {
    const Tensor t = p_.side(side).load(*reads_[side][k]);
    std::vector<double> v(size_t(t.numel()));
    for (int64_t e = 0; e < t.numel(); ++e) v[size_t(e)] = element_as_double(t, e);
    read_in_order_[side].push_back(std::move(v));
  }
}

bool DataFlow::same_read(double x, double y) const {
  load_reads(0), load_reads(1);
  const auto is = [](double held, double v) { return held == v || held == double(float(v)); };
  for (size_t k = 0; k < read_in_order_[0].size() && k < read_in_order_[1].size(); ++k) {
    const std::vector<double>&ra = read_in_order_[0][k], &rb = read_in_order_[1][k];
    for (size_t e = 0; e < ra.size() && e < rb.size(); ++e) {
      if (is(ra[e], x) && is(rb[e], y)) return true;
    }
  }
  return false;
}

bool DataFlow::numbers_read_into_python(const std::string& a, const std::string& b) const {
  if (a == b || !only_numbers_differ(a, b)) return false;
  const std::vector<std::string> na = numbers_in(a), nb = numbers_in(b);
  if (na.size() != nb.size()) return false;
  for (size_t k = 0; k < na.size(); ++k) {
    if (na[k] != nb[k] && !same_read(std::strtod(na[k].c_str(), nullptr), std::strtod(nb[k].c_str(), nullptr))) return false;
  }
  return true;
}

int64_t DataFlow::add_origin(const std::string& name) {
  origin_names_.push_back(name);
  return int64_t(origin_names_.size()) - 1;
}

}  // namespace parity
