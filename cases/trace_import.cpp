#include "cases/trace_import.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/op_line.h"

namespace parity {

using nlohmann::json;

namespace {

// The whole file, decompressed when it is gzip (by content, not by name).
std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged too
  if (!f) throw Error("cannot open trace").file(path);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string what = n < 0 ? std::string(msg ? msg : "read error") : "";
  gzclose(f);
  if (n < 0) throw Error("cannot read trace: " + what).file(path);
  return out;
}

struct OpEvent {
  std::string name;
  int64_t ts = 0, dur = 0;
  json args;
};

std::vector<int64_t> dims_of(const json& d) {
  std::vector<int64_t> out;
  if (!d.is_array()) return out;
  for (const json& v : d) {
    if (!v.is_number_integer()) return {};
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// Input i's dims, or empty when absent.
std::vector<int64_t> input_dims(const json& args, size_t i) {
  const auto it = args.find("Input Dims");
  if (it == args.end() || !it->is_array() || i >= it->size()) return {};
  return dims_of((*it)[i]);
}

std::string input_type(const json& args, size_t i) {
  const auto it = args.find("Input type");
  if (it == args.end() || !it->is_array() || i >= it->size() || !(*it)[i].is_string()) return "";
  return (*it)[i].get<std::string>();
}

// Concrete input i as recorded ("[2, 2]", "1", "0.6"), or "" when not recorded.
std::string concrete(const json& args, size_t i) {
  const auto it = args.find("Concrete Inputs");
  if (it == args.end() || !it->is_array() || i >= it->size() || !(*it)[i].is_string()) return "";
  return (*it)[i].get<std::string>();
}

// "[2, 2]" -> {2, 2}; "2" -> {2}; empty when a number does not parse or fit in int64.
std::vector<int64_t> int_list(const std::string& s) {
  std::vector<int64_t> out;
  std::string digits;
  for (char ch : s + ",") {
    if ((ch >= '0' && ch <= '9') || ch == '-') {
      digits += ch;
    } else if (!digits.empty()) {
      int64_t v = 0;
      const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (err != std::errc() || end != digits.data() + digits.size()) return {};
      out.push_back(v);
      digits.clear();
    }
  }
  return out;
}

// Event fields of the wrong JSON type read as absent: traces come from many PyTorch versions.
std::string string_field(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t integer_field(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string dtype_for(const std::string& torch_type) {
  if (torch_type == "float") return "float32";
  if (torch_type == "double") return "float64";
  if (torch_type == "c10::Half") return "float16";
  if (torch_type == "int") return "int32";
  if (torch_type == "long int" || torch_type == "long") return "int64";
  if (torch_type == "unsigned char") return "uint8";
  if (torch_type == "bool") return "bool";
  return "";
}

struct Converted {
  std::string line;  // empty: skipped
  std::string skip_reason;
  bool inferred = false;
};

Converted skip(const std::string& why) { return {"", why, false}; }

Converted convert_conv2d(const OpEvent& e, const std::vector<int64_t>* next_input) {
  const auto x = input_dims(e.args, 0), w = input_dims(e.args, 1);
  if (x.size() != 4 || w.size() != 4) return skip("input or weight not 4-D");
  if (input_type(e.args, 0) != "float") return skip("not float32");
  Conv2dParams p;
  p.x = Shape(x);
  p.w = Shape(w);
  p.bias = !input_dims(e.args, 2).empty();
  const auto stride = int_list(concrete(e.args, 3)), pad = int_list(concrete(e.args, 4));
  const auto dil = int_list(concrete(e.args, 5)), groups = int_list(concrete(e.args, 6));
  Converted c;
  if (stride.size() == 2 && pad.size() == 2 && dil.size() == 2 && groups.size() == 1) {
    p.stride_h = stride[0], p.stride_w = stride[1], p.pad_h = pad[0], p.pad_w = pad[1];
    p.dil_h = dil[0], p.dil_w = dil[1], p.groups = groups[0];
  } else {
    c.inferred = true;
    if (w[1] == 0 || x[1] % w[1] != 0) return skip("channels do not divide");
    p.groups = x[1] / w[1];
    p.pad_h = w[2] / 2, p.pad_w = w[3] / 2;
    // The next layer's input is this conv's output when batch and channels line up.
    if (next_input && next_input->size() == 4 && (*next_input)[0] == x[0] && (*next_input)[1] == w[0]) {
      bool found = false;
      for (int64_t pad_try : {w[2] / 2, (w[2] - 1) / 2, int64_t(0)}) {
        for (int64_t s = 1; s <= 4 && !found; ++s) {
          const int64_t oh = (x[2] + 2 * pad_try - (w[2] - 1) - 1) / s + 1, ow = (x[3] + 2 * pad_try - (w[3] - 1) - 1) / s + 1;
          if (oh == (*next_input)[2] && ow == (*next_input)[3]) {
            p.stride_h = p.stride_w = s, p.pad_h = p.pad_w = pad_try, found = true;
          }
        }
        if (found) break;
      }
    }
  }
  try {
    p.validate();
  } catch (const Error& err) {
    return skip(err.message());
  }
  c.line = p.str();
  return c;
}

Converted convert_cat(const OpEvent& e) {
  const auto it = e.args.find("Input Dims");
  if (it == e.args.end() || !it->is_array() || it->empty() || !(*it)[0].is_array()) return skip("no input dims");
  CatParams p;
  for (const json& d : (*it)[0]) {
    const auto dims = dims_of(d);
    if (dims.empty() && !(d.is_array() && d.empty())) return skip("malformed tensor list");
    p.xs.push_back(Shape(dims));
  }
  if (p.xs.empty()) return skip("empty tensor list");
  // A tensor list records no element type; the cats parity replays are float32.
  Converted c;
  const auto dim = int_list(concrete(e.args, 1));
  if (dim.size() == 1) {
    p.dim = dim[0];
  } else {
    c.inferred = true;
    int64_t differing = -1;
    for (size_t k = 0; k < p.xs[0].rank(); ++k) {
      for (const Shape& s : p.xs) {
        if (s.rank() == p.xs[0].rank() && s[k] != p.xs[0][k]) differing = int64_t(k);
      }
    }
    p.dim = differing >= 0 ? differing : 0;
  }
  try {
    p.output_shape();
  } catch (const Error& err) {
    return skip(err.message());
  }
  c.line = p.str();
  return c;
}

Converted convert(const OpEvent& e, const std::vector<int64_t>* next_input) {
  const std::string& n = e.name;
  const auto x = input_dims(e.args, 0);
  const std::string type = input_type(e.args, 0);
  if (n == "aten::conv2d") return convert_conv2d(e, next_input);
  if (n == "aten::cat") return convert_cat(e);
  if (n == "aten::silu" || n == "aten::silu_" || n == "aten::sigmoid" || n == "aten::sigmoid_") {
    if (type != "float" && type != "double") return skip("not float32/float64");
    const std::string op = n.find("silu") != std::string::npos ? "silu" : "sigmoid";
    return {op + " x=" + Shape(x).str() + (type == "double" ? " dtype=float64" : ""), "", false};
  }
  if (n == "aten::add" || n == "aten::add_") {
    const auto y = input_dims(e.args, 1);
    const std::string dt = dtype_for(type);
    if (x.empty() || x != y || input_type(e.args, 1) != type) return skip("not two tensors of one shape");
    if (dt != "float32" && dt != "float64" && dt != "int32" && dt != "int64") return skip("dtype " + type);
    const std::string alpha = concrete(e.args, 2);
    if (!alpha.empty() && alpha != "1") return skip("alpha " + alpha);
    return {"add x=" + Shape(x).str() + (dt == "float32" ? "" : " dtype=" + dt), "", false};
  }
  if (n == "aten::max_pool2d") {
    const auto k = int_list(concrete(e.args, 1));
    if (k.empty()) return skip("kernel size not recorded");
    auto hw = [](const std::vector<int64_t>& v, int64_t fallback) {
      return v.empty() ? std::to_string(fallback) : v.size() == 1 || v[0] == v[1] ? std::to_string(v[0]) : std::to_string(v[0]) + "x" + std::to_string(v[1]);
    };
    const auto s = int_list(concrete(e.args, 2));
    std::string line = "maxpool2d x=" + Shape(x).str() + " k=" + hw(k, 1) + " stride=" + (s.empty() ? hw(k, 1) : hw(s, 1)) +
                       " pad=" + hw(int_list(concrete(e.args, 3)), 0) + " dilation=" + hw(int_list(concrete(e.args, 4)), 1);
    if (concrete(e.args, 5) == "True") line += " ceil";
    return {line, "", false};
  }
  if (n == "aten::nonzero") {
    const std::string dt = dtype_for(type);
    if (dt.empty()) return skip("dtype " + type);
    return {"nonzero x=" + Shape(x).str() + " dtype=" + dt, "", false};
  }
  if (n == "aten::gt") {
    const std::string value = concrete(e.args, 1);
    if (type != "float" || !input_dims(e.args, 1).empty() || value.empty()) return skip("not a float tensor against a recorded scalar");
    return {"threshold x=" + Shape(x).str() + " value=" + value, "", false};
  }
  if (n == "torchvision::nms") {
    const std::string iou = concrete(e.args, 2);
    if (x.size() != 2 || x[1] != 4 || iou.empty()) return skip("boxes not [N,4] or threshold not recorded");
    return {"nms boxes=" + Shape(x).str() + " iou=" + iou, "", false};
  }
  return skip("");
}

}  // namespace

TraceImport import_trace(const std::string& path, bool keep_all) { return import_trace_text(read_maybe_gzip(path), path, keep_all); }

TraceImport import_trace_text(std::string_view text, const std::string& path, bool keep_all) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(std::string("not a JSON trace: ") + e.what()).file(path);
  }
  const json* events = doc.is_object() && doc.contains("traceEvents") ? &doc["traceEvents"] : doc.is_array() ? &doc : nullptr;
  if (!events || !events->is_array()) throw Error("no traceEvents array (not a Chrome trace)").file(path);

  // Operator events per thread, in start order.
  std::map<std::string, std::vector<OpEvent>> threads;
  TraceImport r;
  for (const json& e : *events) {
    if (!e.is_object() || string_field(e, "ph") != "X") continue;
    const std::string cat = string_field(e, "cat");
    if (cat != "Operator" && cat != "cpu_op") continue;
    OpEvent op;
    op.name = string_field(e, "name");
    // Clamped so that ts + dur cannot overflow (Kineto's are microseconds, far below 2^62).
    constexpr int64_t kMaxTime = int64_t(1) << 62;
    op.ts = std::clamp<int64_t>(integer_field(e, "ts"), 0, kMaxTime);
    op.dur = std::clamp<int64_t>(integer_field(e, "dur"), 0, kMaxTime);
    const auto args = e.find("args");
    op.args = args != e.end() && args->is_object() ? *args : json::object();
    const json tid = e.contains("tid") ? e["tid"] : json();
    threads[tid.is_string() ? tid.get<std::string>() : tid.dump()].push_back(std::move(op));
    ++r.operator_events;
  }
  std::set<std::string> seen;
  for (auto& [tid, ops] : threads) {
    std::stable_sort(ops.begin(), ops.end(), [](const OpEvent& a, const OpEvent& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;  // a parent before children starting with it
    });
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpEvent& e = ops[i];
      // The layer after this one: among the next few ops that start once it has ended, the
      // first whose input is 4-D (wrappers such as ProfilerStep#N enclose everything, so
      // "top-level" cannot be relied on).
      std::vector<int64_t> next;
      for (size_t j = i + 1; j < ops.size() && j < i + 64 && next.empty(); ++j) {
        if (ops[j].ts >= e.ts + e.dur && input_dims(ops[j].args, 0).size() == 4) next = input_dims(ops[j].args, 0);
      }
      Converted c;
      try {
        c = convert(e, next.empty() ? nullptr : &next);
      } catch (const Error& err) {  // e.g. a negative dimension: this call is skipped, not the trace
        c = skip(err.message());
      }
      if (c.line.empty()) {
        ++r.skipped[c.skip_reason.empty() ? e.name : e.name + " (" + c.skip_reason + ")"];
        continue;
      }
      ++r.calls;
      Case k;
      try {
        k.line = canonical_line(c.line);
      } catch (const Error& err) {
        ++r.skipped[e.name + " (" + err.message() + ")"];
        --r.calls;
        continue;
      }
      k.inferred = c.inferred;
      if (!keep_all && !seen.insert(k.line + (k.inferred ? " inferred" : "")).second) {
        ++r.duplicates;
        continue;
      }
      k.name = "trace." + std::to_string(r.cases.size()) + "." + op_name_of(k.line);
      r.cases.push_back(std::move(k));
    }
  }
  return r;
}

}  // namespace parity
