#include "kernels/torch_calls.h"

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "kernels/torch_calls_table.h"  // generated from python/parity_torch/torch_calls.tsv

namespace parity {
namespace {

TorchBound bound_of(const std::string& word, const std::string& row) {
  static const std::map<std::string, TorchBound> m = {
      {"-", TorchBound::None},         {"exact", TorchBound::Exact},          {"rounded", TorchBound::Rounded},
      {"sum", TorchBound::Sum},        {"softmax", TorchBound::Softmax},      {"log_softmax", TorchBound::LogSoftmax},
      {"logsumexp", TorchBound::LogSumExp}, {"cosine", TorchBound::Cosine},  {"layer_norm", TorchBound::LayerNorm},
      {"group_norm", TorchBound::GroupNorm}, {"input_and_output", TorchBound::InputAndOutput},
      {"one_and_output", TorchBound::OneAndOutput}, {"positive", TorchBound::Positive},
      {"log_loss", TorchBound::LogLoss}, {"window", TorchBound::Window}, {"loss_terms", TorchBound::LossTerms}, {"steps", TorchBound::Steps},
      {"moments", TorchBound::Moments}, {"attention", TorchBound::Attention}, {"rms_norm", TorchBound::RmsNorm}, {"fourier", TorchBound::Fourier}};
  const auto it = m.find(word);
  if (it == m.end()) throw Error("torch_calls.tsv: row \"" + row + "\": unknown bound \"" + word + "\"");
  return it->second;
}

void set_flag(TorchCall& c, const std::string& flag, const std::string& row) {
  const std::map<std::string, bool TorchCall::*> flags = {
      {"placement", &TorchCall::placement}, {"metadata", &TorchCall::metadata}, {"python_read", &TorchCall::python_read},
      {"composite", &TorchCall::composite}, {"copy", &TorchCall::copy},         {"cast", &TorchCall::cast},
      {"fills", &TorchCall::fills},         {"uninitialised", &TorchCall::uninitialised}, {"tied", &TorchCall::tied},
      {"arithmetic", &TorchCall::arithmetic}, {"reflected", &TorchCall::reflected}, {"samples", &TorchCall::samples},
      {"lowp", &TorchCall::lowp}, {"fp32_sum", &TorchCall::fp32_sum}, {"bias_after", &TorchCall::bias_after},
      {"half_sum", &TorchCall::half_sum}, {"half_weights", &TorchCall::half_weights},
      {"half_steps", &TorchCall::half_steps}, {"literal", &TorchCall::literal},
      {"exact_terms", &TorchCall::exact_terms}, {"complex_out", &TorchCall::complex_out}, {"half_inside", &TorchCall::half_inside},
      {"first_output", &TorchCall::first_output}, {"fp32_autocast", &TorchCall::fp32_autocast},
      {"number_in_type", &TorchCall::number_in_type}, {"allocates", &TorchCall::allocates}};
  const auto it = flags.find(flag);
  if (it == flags.end()) throw Error("torch_calls.tsv: row \"" + row + "\": unknown flag \"" + flag + "\"");
  c.*(it->second) = true;
}

struct Table {
  std::vector<TorchCall> rows;
  std::map<std::string, size_t> by_name;
};

const Table& table() {
  static const Table t = [] {
    Table out;
    std::istringstream in(kTorchCallsTable);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> cols;
      std::istringstream fields(line);
      for (std::string f; std::getline(fields, f, '\t');) cols.push_back(f);
      if (cols.size() != 5) throw Error("torch_calls.tsv: row \"" + line + "\": not 5 tab-separated columns");
      TorchCall c;
      c.name = cols[0];
      c.aten = cols[1] == "-" ? "" : cols[1];
      c.bound = bound_of(cols[2], line);
      c.dtype = cols[3] == "-" ? "" : cols[3];
      std::istringstream flags(cols[4]);
      for (std::string f; std::getline(flags, f, ',');) {
        if (f != "-") set_flag(c, f, line);
      }
      if (!out.by_name.emplace(c.name, out.rows.size()).second) throw Error("torch_calls.tsv: \"" + c.name + "\" twice");
      out.rows.push_back(std::move(c));
    }
    return out;
  }();
  return t;
}

const TorchCall* row(const std::string& name) {
  const Table& t = table();
  const auto it = t.by_name.find(name);
  return it == t.by_name.end() ? nullptr : &t.rows[it->second];
}

// The last word of a torch op: "torch.Tensor.add_" -> "add_"; "" for another op.
std::string python_word(const std::string& op) {
  for (const char* prefix : {"torch.Tensor.", "torch.nn.functional.", "torch.", "torchvision."}) {
    if (op.rfind(prefix, 0) == 0) {
      const std::string name = op.substr(std::string(prefix).size());
      return name.find('.') == std::string::npos ? name : "";
    }
  }
  return "";
}

}  // namespace

std::string torch_call_name(const std::string& op) {
  std::string name = python_word(op);
  if (name.empty() || row(name)) return name;
  if (name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0) {
    name = name.substr(2, name.size() - 4);  // __matmul__ -> matmul, __iadd__ -> add
    if (name.size() > 1 && name[0] == 'i' && row(name.substr(1))) name = name.substr(1);
  } else if (name.size() > 1 && name.back() == '_') {
    name.pop_back();  // add_ -> add
  }
  return name;
}

const TorchCall* torch_call(const std::string& op) { return row(torch_call_name(op)); }

bool is_torch_call(const std::string& op) { return op.rfind("torch.", 0) == 0 || op.rfind("torchvision.", 0) == 0; }

namespace {

// The text of a line's field `key=`; nullopt when the line has none.
std::optional<std::string> field_text(const std::string& line, const std::string& key) {
  const std::regex field(" " + key + R"(=(.*?)(?= [A-Za-z_][A-Za-z_0-9]*=|$))");
  std::smatch m;
  if (std::regex_search(line, m, field)) return m[1].str();
  return std::nullopt;
}

// The text of an argument given by keyword (any of `keys`) or as arg<pos>; nullopt when neither.
std::optional<std::string> line_argument(const std::string& line, std::initializer_list<const char*> keys, int pos) {
  for (const char* key : keys) {
    if (std::optional<std::string> v = field_text(line, key)) return v;
  }
  return field_text(line, "arg" + std::to_string(pos));
}

}  // namespace

bool norm_sums_in_float32(const std::string& line, size_t rank) {
  const std::optional<std::string> p = line_argument(line, {"p", "ord"}, 1);
  if (p && *p != "None" && *p != "2" && *p != "2.0" && *p != "'fro'" && *p != "\"fro\"" && *p != "inf" && *p != "-inf") return false;
  const std::optional<std::string> dim = line_argument(line, {"dim"}, 2);
  if (!dim || *dim == "None") return true;
  std::set<int64_t> dims;
  static const std::regex number(R"(-?[0-9]+)");
  for (auto it = std::sregex_iterator(dim->begin(), dim->end(), number); it != std::sregex_iterator(); ++it) {
    int64_t d = std::stoll(it->str());
    if (d < 0) d += int64_t(rank);
    if (d < 0 || d >= int64_t(rank)) return false;
    dims.insert(d);
  }
  if (dims.empty()) return false;
  return *dims.begin() == int64_t(rank) - int64_t(dims.size()) && *dims.rbegin() == int64_t(rank) - 1;
}

bool placement_argument(const std::string& key) {
  const TorchCall* c = row(key);
  return c && c->placement;
}

const std::vector<TorchCall>& torch_calls() { return table().rows; }

}  // namespace parity
