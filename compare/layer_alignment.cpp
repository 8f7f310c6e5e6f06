#include "compare/layer_alignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "kernels/backend.h"
#include "kernels/torch_calls.h"

namespace parity {
namespace {

// A number as Python's repr writes it (0.5, 1e-05, 3), without its sign; and with it (-0.5).
constexpr char kUnsignedNumber[] = R"([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)";
const std::regex& number_text() {
  static const std::regex r(std::string("-?") + kUnsignedNumber);
  return r;
}

// The keys as small integers, equal where the strings are, so the diff compares integers.
std::pair<std::vector<int64_t>, std::vector<int64_t>> key_ids(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b) {
  std::unordered_map<std::string, int64_t> ids;
  const auto of = [&](const std::vector<AlignedLayer>& side) {
    std::vector<int64_t> out;
    out.reserve(side.size());
    for (const AlignedLayer& l : side) out.push_back(ids.emplace(l.key, int64_t(ids.size())).first->second);
    return out;
  };
  auto ia = of(a);
  return {std::move(ia), of(b)};
}

// Myers' O((N+M)D) diff of ka[a0, a1) against kb[b0, b1): the matched positions go into `twin`.
// False, `twin` untouched, when more than max_edits insertions and deletions are needed.
bool diff_keys(const std::vector<int64_t>& ka, const std::vector<int64_t>& kb, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
               int64_t max_edits, std::vector<int64_t>& twin) {
  const int64_t n = a1 - a0, m = b1 - b0, most = std::min(n + m, max_edits);
  const int64_t off = most + 1;
  std::vector<int64_t> v(size_t(2 * most + 3), 0);
  // trace[d]: v at the start of step d, for diagonals -d..d: enough to walk the path back.
  std::vector<std::vector<int64_t>> trace;
  const auto same = [&](int64_t x, int64_t y) { return ka[size_t(a0 + x)] == kb[size_t(b0 + y)]; };
  for (int64_t d = 0; d <= most; ++d) {
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
    for (int64_t k = -d; k <= d; k += 2) {
      int64_t x = (k == -d || (k != d && v[size_t(off + k - 1)] < v[size_t(off + k + 1)])) ? v[size_t(off + k + 1)]
                                                                                              : v[size_t(off + k - 1)] + 1;
      int64_t y = x - k;
      while (x < n && y < m && same(x, y)) ++x, ++y;
      v[size_t(off + k)] = x;
      if (x < n || y < m) continue;
      // Walk back from the end, one edit per step, marking each diagonal run as pairs.
      const auto pair_back = [&](int64_t to_x, int64_t to_y) {
        for (; x > to_x && y > to_y; --x, --y) twin[size_t(a0 + x - 1)] = b0 + y - 1;
      };
      for (int64_t e = d; e > 0; --e) {
        const std::vector<int64_t>& t = trace[size_t(e)];
        const auto at = [&](int64_t kk) { return t[size_t(kk + e)]; };
        const int64_t kk = x - y;
        const int64_t prev_k = (kk == -e || (kk != e && at(kk - 1) < at(kk + 1))) ? kk + 1 : kk - 1;
        const int64_t prev_x = at(prev_k), prev_y = prev_x - prev_k;
        pair_back(prev_x, prev_y);
        x = prev_x, y = prev_y;
      }
      pair_back(0, 0);
      return true;
    }
  }
  return false;
}

// Layers of A and of B left unpaired between two pairs (or the ends) pair by name, in order.
void pair_gaps_by_name(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, std::vector<int64_t>& twin) {
  int64_t ia = 0, ib = 0;  // the gap starts here on each side
  const int64_t n = int64_t(a.size()), m = int64_t(b.size());
  while (ia < n || ib < m) {
    int64_t ea = ia;
    while (ea < n && twin[size_t(ea)] < 0) ++ea;
    const int64_t eb = ea < n ? twin[size_t(ea)] : m;
    std::map<std::string, std::vector<int64_t>> in_gap;
    for (int64_t j = ib; j < eb; ++j) in_gap[b[size_t(j)].name].push_back(j);
    int64_t floor = ib;  // B layers before this one are paired or passed over
    for (int64_t i = ia; i < ea && !in_gap.empty(); ++i) {
      const auto it = in_gap.find(a[size_t(i)].name);
      if (it == in_gap.end()) continue;
      const auto j = std::lower_bound(it->second.begin(), it->second.end(), floor);
      if (j == it->second.end()) continue;
      twin[size_t(i)] = *j;
      floor = *j + 1;
    }
    ia = ea + 1, ib = eb + 1;
  }
}

// Layers still unpaired that have the same key and the same name on both sides pair, k-th with
// k-th, in whatever order each side ran them: calls the model code runs in another order (a
// branch computed before another) are still the same calls.
void pair_reordered(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, std::vector<int64_t>& twin) {
  std::vector<char> b_paired(b.size(), 0);
  for (const int64_t j : twin) {
    if (j >= 0) b_paired[size_t(j)] = 1;
  }
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> unpaired_b;
  for (size_t j = b.size(); j-- > 0;) {
    if (!b_paired[j]) unpaired_b[{b[j].key, b[j].name}].push_back(int64_t(j));  // last first: pop_back takes the first
  }
  for (size_t i = 0; i < a.size() && !unpaired_b.empty(); ++i) {
    if (twin[i] >= 0) continue;
    const auto it = unpaired_b.find({a[i].key, a[i].name});
    if (it == unpaired_b.end()) continue;
    twin[i] = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) unpaired_b.erase(it);
  }
}

}  // namespace

std::vector<int64_t> align_layers(const std::vector<AlignedLayer>& a, const std::vector<AlignedLayer>& b, int64_t max_edits) {
  const auto [ka, kb] = key_ids(a, b);
  const int64_t n = int64_t(a.size()), m = int64_t(b.size());
  std::vector<int64_t> twin(a.size(), -1);
  int64_t lo = 0, hi_a = n, hi_b = m;
  for (; lo < n && lo < m && ka[size_t(lo)] == kb[size_t(lo)]; ++lo) twin[size_t(lo)] = lo;
  for (; hi_a > lo && hi_b > lo && ka[size_t(hi_a - 1)] == kb[size_t(hi_b - 1)]; --hi_a, --hi_b) twin[size_t(hi_a - 1)] = hi_b - 1;
  diff_keys(ka, kb, lo, hi_a, lo, hi_b, max_edits, twin);  // when it gives up, the middle pairs by name alone
  pair_gaps_by_name(a, b, twin);
  pair_reordered(a, b, twin);
  return twin;
}


namespace {

// Whether a field of an unknown op's line says where or how a tensor is placed, not what is
// computed: its device (as a keyword, or a positional `.to(device)`), its memory layout, pinning,
// whether autograd follows it. Two runs of one model on the CPU and on a GPU differ in these.
bool placement_field(const std::string& key, const std::string& value) {
  if (placement_argument(key)) return true;
  if (value.rfind("device(", 0) == 0) return true;
  static const std::regex device_text(R"(^['"](cpu|cuda|mps|xpu|meta)(:[0-9]+)?['"]$)");
  return std::regex_match(value, device_text);
}

// A floating dtype argument (`dtype=`, or a positional `.to(torch.float16)`) names the run's
// precision, not the call: a float64 or float16 run and a float32 one run the same model. Every
// floating dtype reads as one word; an integer or bool dtype stays itself.
std::string dtype_identity(const std::string& value) {
  static const std::regex floating(R"(^torch\.(float(16|32|64)?|half|double|bfloat16)$)");
  return std::regex_match(value, floating) ? "floating" : value;
}

// A floating type's constants as torch.finfo gives them, per finfo_identity's bits (not its
// resolution, 1e-6 for float32: a literal many models write).
struct FinfoConstants {
  double max, eps, tiny;
};
const FinfoConstants kFinfo[] = {{65504.0, 0x1p-10, 0x1p-14},
                                 {0x1.fep127, 0x1p-7, 0x1p-126},
                                 {double(std::numeric_limits<float>::max()), 0x1p-23, 0x1p-126},
                                 {std::numeric_limits<double>::max(), 0x1p-52, 0x1p-1022}};

// Two finite numbers within 1e-9 of each other (a number over float64's tiny is past its range).
bool close(double x, double y) {
  return std::isfinite(x) && std::isfinite(y) && std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
}

// A Python number that is a floating type's own constant (torch.finfo(dtype).min, max, eps or
// tiny, of float16, bfloat16, float32 or float64) names the run's precision, not the call: masks
// built from finfo(dtype).min (BERT's, GPT-2's, every transformers attention) and guards built
// from finfo(dtype).eps give each precision's number. Each reads as one word ("finfo.min").
// Only the constants of the floating types the run itself used count (`types`: float16, bfloat16,
// float32, float64, FloatTypes' bits): a model that swaps one constant for another type's is
// another model.
std::string finfo_identity(const std::string& value, unsigned types) {
  if (!types || !std::regex_match(value, number_text())) return value;
  const double v = std::strtod(value.c_str(), nullptr);
  for (unsigned k = 0; k < 4; ++k) {
    if (!(types & (1u << k))) continue;
    const FinfoConstants& t = kFinfo[k];
    if (v == -t.max) return "finfo.min";
    if (v == t.max) return "finfo.max";
    if (v == t.eps) return "finfo.eps";
    if (v == t.tiny) return "finfo.tiny";
  }
  return value;
}

}  // namespace

bool same_finfo_derivation(double a, unsigned types_a, double b, unsigned types_b) {
  if (a == b || a == 0 || b == 0 || !std::isfinite(a) || !std::isfinite(b)) return false;
  for (unsigned ka = 0; ka < 4; ++ka) {
    for (unsigned kb = 0; kb < 4; ++kb) {
      if (ka == kb || !(types_a & (1u << ka)) || !(types_b & (1u << kb))) continue;
      const FinfoConstants &ta = kFinfo[ka], &tb = kFinfo[kb];
      for (const auto member : {&FinfoConstants::max, &FinfoConstants::eps, &FinfoConstants::tiny}) {
        const double ca = ta.*member, cb = tb.*member;
        if (close(a / ca, b / cb)) return true;  // eps * 10, min / 2
        if (a != 1 && b != 1 && close((a - 1) / ca, (b - 1) / cb)) return true;  // 1 - eps, 1 + eps * 4
        // eps ** 0.5, 1 / eps: the same power of each (both of one sign, neither 1)
        if ((a > 0) == (b > 0) && std::fabs(a) != 1 && close(std::log(std::fabs(a)) / std::log(ca), std::log(std::fabs(b)) / std::log(cb))) {
          return true;
        }
      }
    }
  }
  return false;
}

// The floating types a dump's run used, as finfo_identity's bits (float16 1, bfloat16 2, float32
// 4, float64 8): its tensors' dtypes, the types its outputs were held in (cast_from), and those
// its run record names (param_dtypes float64 for a float64 run written as float32, autocast's).
unsigned float_types(const Dump& d) {
  unsigned bits = 0;
  const auto add = [&](const std::string& name) {
    if (name.find("float16") != std::string::npos && name.find("bfloat16") == std::string::npos) bits |= 1;
    if (name.find("bfloat16") != std::string::npos) bits |= 2;
    if (name.find("float32") != std::string::npos) bits |= 4;
    if (name.find("float64") != std::string::npos) bits |= 8;
  };
  for (const DumpLayer& l : d.layers) {
    for (const std::vector<DumpTensorInfo>* list : {&l.inputs, &l.outputs}) {
      for (const DumpTensorInfo& t : *list) add(t.dtype), add(t.cast_from);
    }
  }
  for (const auto& [key, value] : d.run) add(value);
  return bits;
}

namespace {

// A call's identity: a known op's canonical line; for an op parity does not know, its words with
// the fields sorted, one space apart (another tool may write the same call's fields in any order
// and spacing), without the fields that place tensors (placement_field), and with any floating
// dtype as one word (dtype_identity); a known op's line without its precision= (a half run's op
// that one backend ran in float32 for want of a half kernel), and a floating type's constant as
// one word (finfo_identity). Two correct runs on two devices or in two precisions name the same
// calls.
std::string canonical_call(const std::string& line, unsigned types) {
  if (is_known_op(op_name_of(line))) return with_half(canonical_line(line), HalfType::None);
  std::istringstream in(line);
  std::string op, word;
  in >> op;
  std::vector<std::string> fields;
  while (in >> word) {
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (placement_field(key, value)) continue;
    fields.push_back(eq == std::string::npos ? word : key + "=" + finfo_identity(dtype_identity(value), types));
  }
  std::sort(fields.begin(), fields.end());
  for (const std::string& f : fields) op += " " + f;
  return op;
}

// key -> value of a line's fields (flags map to ""; the op to the key "").
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> f;
  std::istringstream in(line);
  std::string word;
  in >> f[""];
  while (in >> word) {
    const size_t eq = word.find('=');
    f[word.substr(0, eq)] = eq == std::string::npos ? "" : word.substr(eq + 1);
  }
  return f;
}



// A call without the fields that give its input tensors' shapes: what it computes, whatever
// the data made of the shapes (a per-class loop keeps another number of boxes on each side).
// A field is a shape when its key is an input's role (`in1`, `x` for cat's `x0`, `x1`...) or its
// value reads as one (`2x3`, `1x2,1x3`, `scalar`).
std::string call_without_shapes(const DumpLayer& l, const std::string& canonical) {
  static const std::regex shape(R"(^(scalar|[0-9]+(x[0-9]+)+)(,(scalar|[0-9]+(x[0-9]+)*))*$)");
  const auto is_role = [&](const std::string& key) {
    for (const DumpTensorInfo& t : l.inputs) {
      if (t.role == key || (t.role.rfind(key, 0) == 0 && t.role.find_first_not_of("0123456789_", key.size()) == std::string::npos)) {
        return true;
      }
    }
    return false;
  };
  std::istringstream in(canonical);
  std::string word, out;
  in >> out;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos && (is_role(word.substr(0, eq)) || std::regex_match(word.substr(eq + 1), shape))) continue;
    out += " " + word;
  }
  return out;
}

// What alignment pairs a layer by: its op, its name without the counter that numbers calls of
// one kind in a scope ("model.24.mul.5" is model.24's sixth mul: another call before it shifts
// the count), and its call without its input shapes (call_without_shapes). `canonical`: each
// layer's canonical_call.
std::vector<AlignedLayer> alignment_of(const Dump& d, const std::vector<std::string>& canonical) {
  static const std::regex counter(R"(\.[0-9]+$)");
  std::vector<AlignedLayer> out;
  out.reserve(d.layers.size());
  for (size_t i = 0; i < d.layers.size(); ++i) {
    const DumpLayer& l = d.layers[i];
    out.push_back({l.op + '\n' + std::regex_replace(l.name, counter, "") + '\n' + call_without_shapes(l, canonical[i]), l.name});
  }
  return out;
}

// Each layer's canonical_call, once for the whole comparison (a known op's from the call its
// manifest was read with).
std::vector<std::string> canonical_calls(const Dump& d) {
  std::vector<std::string> out;
  out.reserve(d.layers.size());
  const unsigned types = float_types(d);
  for (const DumpLayer& l : d.layers) out.push_back(l.call ? with_half(l.call->line(), HalfType::None) : canonical_call(l.line, types));
  return out;
}

}  // namespace

std::vector<std::string> numbers_in(const std::string& line) {
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), number_text()); it != std::sregex_iterator(); ++it) out.push_back(it->str());
  return out;
}

bool only_numbers_differ(const std::string& ca, const std::string& cb) {
  // A number whole, point and exponent included (1e-06 against 0.01); its sign is not a number's.
  static const std::regex unsigned_number(kUnsignedNumber);
  return std::regex_replace(ca, unsigned_number, "#") == std::regex_replace(cb, unsigned_number, "#");
}

namespace {
// A tensor's repr written into an argument's text: `tensor(3)`, `tensor([1,2])`.
const std::regex& tensor_text() {
  static const std::regex r(R"(tensor\([^()]*\))");
  return r;
}

// The numbers a slice bound clamped to what it indexes takes: 0 and each size of the line's
// tensors (torchvision's paste clamps a box to its canvas: max(box[0], 0), min(box[2] + 1, w)).
std::set<std::string> clamp_bounds(const std::map<std::string, std::string>& fields, const std::set<std::string>& tensor_roles) {
  static const std::regex recorded_role(R"(^in[0-9_]+$)");
  std::set<std::string> out{"0"};
  for (const auto& [key, value] : fields) {
    if (!tensor_roles.count(key) && !std::regex_match(key, recorded_role)) continue;
    std::istringstream sizes(value);
    for (std::string size; std::getline(sizes, size, 'x');) out.insert(size);
  }
  return out;
}

// Whether the token at `pos` (of `len` characters) of a text is a slice's start or stop: beside a
// colon in a view's chain (`[0:<tensor>]`), or slice(start, stop, ...)'s first two in a line.
bool slice_bound(const std::string& text, size_t pos, size_t len) {
  if ((pos > 0 && text[pos - 1] == ':') || (pos + len < text.size() && text[pos + len] == ':')) return true;
  const size_t open = text.rfind("slice(", pos);
  if (open == std::string::npos) return false;
  static const std::regex stop_follows(R"(^[^(),]*,$)");
  const std::string before = std::regex_replace(text.substr(open + 6, pos - open - 6), tensor_text(), "t");
  return before.empty() || std::regex_match(before, stop_follows);
}

// A tensor's value as its repr gives it (`tensor(3)`, `tensor(3.)`); nullopt for any other.
std::optional<double> tensor_value(const std::string& token) {
  static const std::regex plain(std::string(R"(^tensor\((-?)") + kUnsignedNumber + R"(\.?)\)$)");
  if (!std::regex_match(token, plain)) return std::nullopt;
  return std::strtod(token.c_str() + 7, nullptr);
}
}  // namespace

// A Python number facing a tensor counts as the tensor's value only as a clamp's result: Python's
// max(t, 3) gives 3 on the run where t fell below 3 and tensor(3) on the other (the same value);
// torchvision's paste writes max(box[0], 0), 0 on the run whose box fell below it and the box's
// tensor, at least 0, on the other, beside the box's other tensors; min(box[2] + 1, w) writes w,
// the other run a tensor at most w. Only at a slice's bounds. Any other number there (a corner the
// code fixes, a column taken from the row) is the code.
bool same_but_tensor_values(const std::string& a, const std::string& b, const std::array<std::set<std::string>, 2>& clamps) {
  static const std::regex token(std::string(R"(tensor\([^()]*\)|<tensor>|-?)") + kUnsignedNumber);
  auto ia = std::sregex_iterator(a.begin(), a.end(), token), ib = std::sregex_iterator(b.begin(), b.end(), token);
  size_t ea = 0, eb = 0;  // where the text after the last token starts
  for (const std::sregex_iterator end; ia != end || ib != end; ++ia, ++ib) {
    if (ia == end || ib == end) return false;
    if (a.compare(ea, size_t(ia->position()) - ea, b, eb, size_t(ib->position()) - eb) != 0) return false;
    const auto is_tensor = [](const std::string& t) { return t.rfind("tensor(", 0) == 0 || t == "<tensor>"; };
    const bool tensor_a = is_tensor(ia->str()), tensor_b = is_tensor(ib->str());
    if (!tensor_a && !tensor_b && ia->str() != ib->str()) return false;
    if (tensor_a != tensor_b) {
      const int side = tensor_a ? 1 : 0;  // the side that wrote a number
      const std::string number = (tensor_a ? ib : ia)->str(), tensor = (tensor_a ? ia : ib)->str();
      const std::optional<double> value = tensor_value(tensor);
      const double n = std::strtod(number.c_str(), nullptr);
      const bool flipped = value && *value == n;  // max(t, 3): 3, tensor(3)
      const std::string& own = side == 0 ? a : b;
      const size_t at = size_t((tensor_a ? ib : ia)->position());
      const bool beside_tensors = own.find("tensor(") != std::string::npos || own.find("<tensor>") != std::string::npos;
      const bool on_its_side = !value || (n == 0 ? *value >= 0 : *value <= n);  // max(t, 0) kept t >= 0; min(t, w) kept t <= w
      const bool clamped = clamps[size_t(side)].count(number) && beside_tensors && on_its_side && slice_bound(own, at, number.size());
      if (!flipped && !clamped) return false;
    }
    ea = size_t(ia->position() + ia->length());
    eb = size_t(ib->position() + ib->length());
  }
  return a.compare(ea, std::string::npos, b, eb, std::string::npos) == 0;
}
// Two canonical lines of one call that differ only in what the run's data decides: the values
// of tensors written into their arguments (`x[t0:t1] = v` with tensor bounds, `tensor(3)`, a
// clamp's number in a tensor's place) and the shapes of the tensors of `tensor_roles` (`in2=80x50`,
// `x=4x4`: inputs a layer made on each side); every other field, and each other Python number, equal.
bool only_data_differs(const std::string& ca, const std::string& cb, const std::set<std::string>& tensor_roles) {
  const auto fa = fields_of(ca), fb = fields_of(cb);
  if (fa.size() != fb.size()) return false;
  const std::array<std::set<std::string>, 2> clamps = {clamp_bounds(fa, tensor_roles), clamp_bounds(fb, tensor_roles)};
  for (auto ia = fa.begin(), ib = fb.begin(); ia != fa.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (tensor_roles.count(ia->first)) continue;
    if (!same_but_tensor_values(ia->second, ib->second, clamps)) return false;
  }
  return true;
}

std::string without_tensor_shapes(const std::string& line, const std::set<std::string>& tensor_roles) {
  std::istringstream in(line);
  std::string out, word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (!out.empty() && eq != std::string::npos && tensor_roles.count(word.substr(0, eq))) continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// Whether the values of tensors written into two canonical lines' arguments differ.
bool tensors_in_arguments_differ(const std::string& ca, const std::string& cb) {
  const auto all = [](const std::string& line) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), tensor_text()); it != std::sregex_iterator(); ++it) out.push_back(it->str());
    return out;
  };
  return all(ca) != all(cb);
}

// The same op with the same fields, whatever their values.
bool same_fields(const std::string& ca, const std::string& cb) {
  if (ca == cb) return true;
  if (ca.substr(0, ca.find(' ')) != cb.substr(0, cb.find(' '))) return false;
  const auto fa = fields_of(ca), fb = fields_of(cb);
  if (fa.size() != fb.size()) return false;
  for (auto ia = fa.begin(), ib = fb.begin(); ia != fa.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
  }
  return true;
}

DumpPair pair_dumps(const Dump& a, const Dump& b) {
  DumpPair p{a, b, {}, std::vector<int64_t>(b.layers.size(), -1), {canonical_calls(a), canonical_calls(b)}};
  p.b_of_a = align_layers(alignment_of(a, p.canonical[0]), alignment_of(b, p.canonical[1]));
  for (size_t i = 0; i < a.layers.size(); ++i) {
    if (p.b_of_a[i] >= 0) p.a_of_b[size_t(p.b_of_a[i])] = int64_t(i);
  }
  return p;
}

std::string not_comparable(const Dump& a, const Dump& b) {
  // Runs of another batch or image size compute other shapes everywhere: one line says so.
  for (const char* key : {"batch", "img"}) {
    const auto x = a.run.find(key), y = b.run.find(key);
    if (x != a.run.end() && y != b.run.end() && x->second != y->second) {
      return fmt::format("A ran {} {} {}, B {} {}: the runs do not match, nothing to compare", a.model.empty() ? "-" : a.model, key,
                         x->second, key, y->second);
    }
  }
  if (a.layers.size() + b.layers.size() < 3) return "";
  // An op parity does not know: as written; one it knows: canonical, in any precision (a half
  // run against a float32 one computes the same calls).
  auto call = [](const DumpLayer& l) { return l.call ? with_half(l.call->line(), HalfType::None) : l.line; };
  std::map<std::pair<std::string, int64_t>, const DumpLayer*> in_b;
  for (const DumpLayer& l : b.layers) in_b[{l.name, l.occurrence}] = &l;
  size_t same = 0;
  for (const DumpLayer& l : a.layers) {
    const auto it = in_b.find({l.name, l.occurrence});
    same += it != in_b.end() && call(l) == call(*it->second);
  }
  const bool other_model = !a.model.empty() && !b.model.empty() && a.model != b.model;
  // A model named otherwise whose calls mostly agree (the same network recorded under another
  // name) is compared as usual.
  if (same > 0 && !(other_model && 2 * same < a.layers.size())) return "";
  auto given = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::string line = fmt::format("A is {} on {}, B is {} on {}: {}{} of {} layers in A run the same call in B; nothing to compare",
                                 given(a.model), given(a.backend), given(b.model), given(b.backend),
                                 other_model ? "different models, " : "", same, a.layers.size());
  if (!a.layers.empty() && !b.layers.empty()) line += " (first layers: A " + call(a.layers[0]) + ", B " + call(b.layers[0]) + ")";
  return line;
}

}  // namespace parity
