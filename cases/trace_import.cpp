#include "cases/trace_import.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/half.h"
#include "kernels/call.h"
#include "kernels/add/add.h"
#include "kernels/backend.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/op_line.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"
#include "kernels/threshold/threshold.h"

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

// One duration event of a CPU thread: an operator call, or an annotation around calls
// (ProfilerStep#3, Optimizer.step#SGD.step, nn.Module: Conv2d_0).
struct Event {
  std::string name;
  int64_t ts = 0, dur = 0;
  json args;
  bool op = false;  // "cat": "Operator" or "cpu_op"
  int64_t end() const { return ts + dur; }
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

// A recorded scalar as a double; empty unless the whole text is one.
std::optional<double> number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

Converted convert_conv2d(const Event& e, const std::vector<int64_t>* next_input) {
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

Converted convert_cat(const Event& e, const std::vector<int64_t>* /*next_input*/) {
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

Converted convert_activation(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const std::string type = input_type(e.args, 0);
  if (type != "float" && type != "double") return skip("not float32/float64");
  const Shape x(input_dims(e.args, 0));
  const DType dt = type == "double" ? DType::Float64 : DType::Float32;
  if (e.name.rfind("aten::silu", 0) == 0) return {SiluParams{x, dt}.str(), "", false};
  return {SigmoidParams{x, dt}.str(), "", false};
}

Converted convert_add(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const auto x = input_dims(e.args, 0), y = input_dims(e.args, 1);
  const std::string type = input_type(e.args, 0);
  const std::string dt = dtype_for(type);
  if (x.empty() || x != y || input_type(e.args, 1) != type) return skip("not two tensors of one shape");
  if (dt != "float32" && dt != "float64" && dt != "int32" && dt != "int64") return skip("dtype " + type);
  const std::string alpha = concrete(e.args, 2);
  if (!alpha.empty() && alpha != "1") return skip("alpha " + alpha);
  return {AddParams{Shape(x), *dtype_from_name(dt)}.str(), "", false};
}

Converted convert_max_pool2d(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const auto k = int_list(concrete(e.args, 1));
  if (k.empty()) return skip("kernel size not recorded");
  // A list of one applies to both height and width; an empty one leaves the default.
  auto hw = [](const std::vector<int64_t>& v, int64_t& h, int64_t& w) {
    if (!v.empty()) h = v[0], w = v.size() == 1 ? v[0] : v[1];
  };
  Maxpool2dParams p;
  p.x = Shape(input_dims(e.args, 0));
  hw(k, p.k_h, p.k_w);
  const auto s = int_list(concrete(e.args, 2));
  hw(s.empty() ? k : s, p.stride_h, p.stride_w);  // torch: stride defaults to the kernel size
  hw(int_list(concrete(e.args, 3)), p.pad_h, p.pad_w);
  hw(int_list(concrete(e.args, 4)), p.dil_h, p.dil_w);
  p.ceil = concrete(e.args, 5) == "True";
  return {p.str(), "", false};
}

Converted convert_nonzero(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const std::string type = input_type(e.args, 0);
  const std::string dt = dtype_for(type);
  if (dt.empty()) return skip("dtype " + type);
  return {NonzeroParams{Shape(input_dims(e.args, 0)), *dtype_from_name(dt)}.str(), "", false};
}

Converted convert_gt(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const std::string value = concrete(e.args, 1);
  if (input_type(e.args, 0) != "float" || !input_dims(e.args, 1).empty() || value.empty()) {
    return skip("not a float tensor against a recorded scalar");
  }
  const std::optional<double> v = number(value);
  if (!v) return skip("the scalar " + value + " is not a number");
  return {ThresholdParams{Shape(input_dims(e.args, 0)), *v}.str(), "", false};
}

Converted convert_nms(const Event& e, const std::vector<int64_t>* /*next_input*/) {
  const auto x = input_dims(e.args, 0);
  const std::string iou = concrete(e.args, 2);
  if (x.size() != 2 || x[1] != 4 || iou.empty()) return skip("boxes not [N,4] or threshold not recorded");
  const std::optional<double> v = number(iou);
  if (!v) return skip("IoU threshold " + iou + " is not a number");
  return {NmsParams{x[0], *v}.str(), "", false};
}

using Converter = Converted (*)(const Event&, const std::vector<int64_t>*);

// The ops that become cases, by the name the profiler records.
const std::map<std::string, Converter>& converters() {
  static const std::map<std::string, Converter> table = {
      {"aten::conv2d", convert_conv2d},      {"aten::cat", convert_cat},         {"aten::silu", convert_activation},
      {"aten::silu_", convert_activation},   {"aten::sigmoid", convert_activation}, {"aten::sigmoid_", convert_activation},
      {"aten::add", convert_add},            {"aten::add_", convert_add},        {"aten::max_pool2d", convert_max_pool2d},
      {"aten::nonzero", convert_nonzero},    {"aten::gt", convert_gt},           {"torchvision::nms", convert_nms},
  };
  return table;
}

bool supported(const std::string& op_name) { return converters().count(op_name) > 0; }

// The reduced precision a call ran in, from its inputs' recorded types: a model.half() or
// autocast trace records c10::Half or c10::BFloat16 where a float32 one records float. None when
// no input has either; a call mixing the two is none of them (it is skipped as its types say).
HalfType half_of(const json& args) {
  const auto it = args.find("Input type");
  if (it == args.end() || !it->is_array()) return HalfType::None;
  HalfType found = HalfType::None;
  for (const json& t : *it) {
    const HalfType h = !t.is_string() ? HalfType::None
                       : t == "c10::Half"     ? HalfType::Fp16
                       : t == "c10::BFloat16" ? HalfType::Bf16
                                              : HalfType::None;
    if (h == HalfType::None) continue;
    if (found != HalfType::None && found != h) return HalfType::None;
    found = h;
  }
  return found;
}

Converted convert(const Event& e, const std::vector<int64_t>* next_input) {
  const auto it = converters().find(e.name);
  if (it == converters().end()) return skip("no case for this op");
  const HalfType half = half_of(e.args);
  if (half == HalfType::None || e.name == "aten::nonzero") return it->second(e, next_input);  // nonzero has a dtype of its own
  // A half-precision call is its float32 case run at that precision (precision=fp16|bf16), as
  // replay --dtype runs one: the same shapes, the values rounded to the type.
  Event as_float = e;
  for (json& t : as_float.args["Input type"]) {
    if (t == "c10::Half" || t == "c10::BFloat16") t = "float";
  }
  Converted c = it->second(as_float, next_input);
  if (!c.line.empty()) c.line = with_half(c.line, half);
  return c;
}

// ---- Which part of a training step an event belongs to ----

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// PyTorch 1.9 names a backward node after its class, "CudnnConvolutionBackward", "AddBackward0".
bool is_backward_node_name(const std::string& name) {
  if (name.find("::") != std::string::npos) return false;  // aten::threshold_backward is an op
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  const std::string_view suffix = "Backward";
  return end > suffix.size() && name.compare(end - suffix.size(), suffix.size(), suffix) == 0;
}

// Autograd runs each backward node inside a record_function: "autograd::engine::evaluate_function:
// ConvolutionBackward0" (PyTorch 1.10 on), or the node's bare name (1.9). The profiler gives
// those events a "Fwd thread id" > 0 (0 on forward ops): that is how it links each to its forward
// op. Gradients are summed into .grad inside torch::autograd::AccumulateGrad.
bool is_backward(const Event& e) {
  return starts_with(e.name, "autograd::engine::evaluate_function") || e.name == "torch::autograd::AccumulateGrad" ||
         integer_field(e.args, "Fwd thread id") > 0 || is_backward_node_name(e.name);
}

// torch.optim wraps step() and zero_grad() in "Optimizer.step#SGD.step" and
// "Optimizer.zero_grad#SGD.zero_grad"; the DataLoader wraps each batch in
// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"; profiler.step() marks each
// step with "ProfilerStep#N".
bool is_optimiser(const std::string& name) { return starts_with(name, "Optimizer."); }
bool is_data_loading(const std::string& name) { return starts_with(name, "enumerate(DataLoader)#"); }
bool is_step(const std::string& name) { return starts_with(name, "ProfilerStep#"); }

// The forward pass of a step is over once its backward or the optimiser's step() begins. Not
// zero_grad(): training loops call it before the forward as often as after.
bool ends_forward(const Event& e) { return is_backward(e) || starts_with(e.name, "Optimizer.step"); }

// "nn.Module: Conv2d_3" (the Python tracer: class name and instance number) -> "Conv2d_3".
std::string python_module_name(const Event& e) {
  constexpr std::string_view prefix = "nn.Module: ";
  return starts_with(e.name, prefix) ? e.name.substr(prefix.size()) : "";
}

// A TorchScript model's "Module Hierarchy", entries "instance(Class)::method" each followed by
// a dot: "TOP(Net)::forward.layer1(Sequential)::forward.0(Conv2d)::forward." -> "layer1.0".
// TOP is the model itself and SELF a method call within the same module; an op of the model's
// own forward is named by the model's class.
std::string torchscript_module_path(const json& args) {
  std::string h = string_field(args, "Module Hierarchy"), path, top_class;
  h.erase(std::remove(h.begin(), h.end(), '"'), h.end());
  size_t begin = 0;
  while (begin < h.size()) {
    size_t end = h.find('.', begin);
    if (end == std::string::npos) end = h.size();
    const std::string entry = h.substr(begin, end - begin);
    begin = end + 1;
    const size_t open = entry.find('(');
    const std::string instance = entry.substr(0, open);
    if (instance == "TOP" && open != std::string::npos) {
      top_class = entry.substr(open + 1, entry.find(')', open) - open - 1);
    } else if (!instance.empty() && instance != "SELF") {
      path += (path.empty() ? "" : ".") + instance;
    }
  }
  return path.empty() ? top_class : path;
}

// What an event's enclosing events (and, for the flags, the event itself) say about it.
struct Scope {
  bool backward = false, optimiser = false, data_loading = false;
  bool in_op = false;  // inside an operator call: one of its inner calls
  std::string module;  // enclosing nn.Module events, outermost first, joined by "."
};

bool is_annotation(const Event& e) {
  return !e.op || is_step(e.name) || is_optimiser(e.name) || is_data_loading(e.name) || is_backward(e) ||
         !python_module_name(e).empty();
}

Scope scope_inside(const Scope& outer, const Event& e) {
  Scope s = outer;
  s.backward = s.backward || is_backward(e);
  s.optimiser = s.optimiser || is_optimiser(e.name);
  s.data_loading = s.data_loading || is_data_loading(e.name);
  s.in_op = s.in_op || !is_annotation(e);
  const std::string m = python_module_name(e);
  if (!m.empty()) s.module += (s.module.empty() ? "" : ".") + m;
  return s;
}

// An operator call and where it sits.
struct OpEvent {
  const Event* event;
  Scope scope;      // including the call itself
  bool outermost;   // not inside another operator call
  std::string module;
};

// A thread's operator calls in start order, each with its enclosing events (by time: an event
// lies inside the last one still open when it starts).
std::vector<OpEvent> calls_of_thread(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    // A parent before children starting with it; an annotation before an op of the same span.
    return std::make_tuple(a.ts, -a.dur, a.op) < std::make_tuple(b.ts, -b.dur, b.op);
  });
  std::vector<OpEvent> calls;
  std::vector<std::pair<int64_t, Scope>> enclosing;  // the events still open: end time, scope inside
  for (const Event& e : events) {
    while (!enclosing.empty() && e.ts >= enclosing.back().first) enclosing.pop_back();
    const Scope outer = enclosing.empty() ? Scope{} : enclosing.back().second;
    Scope inner = scope_inside(outer, e);
    if (!is_annotation(e)) {
      const std::string torchscript = torchscript_module_path(e.args);
      calls.push_back({&e, inner, !outer.in_op, torchscript.empty() ? outer.module : torchscript});
    }
    enclosing.emplace_back(e.end(), std::move(inner));
  }
  return calls;
}

enum class Part { forward, backward, optimiser, data_loading, after_backward };

const char* part_name(Part p) {
  switch (p) {
    case Part::forward: return "forward";
    case Part::backward: return "backward";
    case Part::optimiser: return "optimiser";
    case Part::data_loading: return "data loading";
    case Part::after_backward: return "after the backward began";
  }
  return "";
}

// Start times, over all threads, of the steps and of the events that end a step's forward.
struct StepMarks {
  std::vector<int64_t> step_starts, forward_ends;
};

StepMarks step_marks(const std::map<std::string, std::vector<Event>>& threads) {
  StepMarks m;
  for (const auto& [tid, events] : threads) {
    for (const Event& e : events) {
      if (is_step(e.name)) m.step_starts.push_back(e.ts);
      if (ends_forward(e)) m.forward_ends.push_back(e.ts);
    }
  }
  std::sort(m.step_starts.begin(), m.step_starts.end());
  std::sort(m.forward_ends.begin(), m.forward_ends.end());
  return m;
}

// Whether the backward or the optimiser's step had begun, in the step holding time ts (from the
// last ProfilerStep start at or before ts; the whole trace when there are none).
bool after_forward_ended(const StepMarks& m, int64_t ts) {
  const auto step = std::upper_bound(m.step_starts.begin(), m.step_starts.end(), ts);
  const int64_t step_start = step == m.step_starts.begin() ? std::numeric_limits<int64_t>::min() : *(step - 1);
  const auto end = std::lower_bound(m.forward_ends.begin(), m.forward_ends.end(), step_start);
  return end != m.forward_ends.end() && *end <= ts;
}

// The rule for "forward pass only", from what training traces record (the resnet50 one of
// PyTorch 1.9 in ../shared/traces, and the record_function names of later releases):
//   - a call inside a backward node, AccumulateGrad, the optimiser (step or zero_grad) or the
//     DataLoader's next batch is not forward, whatever its thread or time;
//   - a call inside an nn.Module (the module hierarchy) is forward: a validation pass after the
//     optimiser's step is still the model's forward;
//   - any other call is forward only if it starts before its step's backward or optimiser step
//     begins. This catches what no marker encloses: 1.9's backward thread sums gradients with
//     bare aten::add calls between nodes, a hand-written optimiser updates weights with bare
//     aten::add_. "Its step" is the ProfilerStep#N span it falls in, on any thread (the backward
//     may run on autograd's own thread), or the whole trace when steps are not marked.
Part part_of_step(const OpEvent& c, const StepMarks& marks) {
  if (c.scope.backward) return Part::backward;
  if (c.scope.optimiser) return Part::optimiser;
  if (c.scope.data_loading) return Part::data_loading;
  if (c.module.empty() && after_forward_ended(marks, c.event->ts)) return Part::after_backward;
  return Part::forward;
}

// ---- Reading the trace and making cases ----

std::map<std::string, std::vector<Event>> read_events(const json& events, TraceImport& r) {
  std::map<std::string, std::vector<Event>> threads;
  for (const json& j : events) {
    if (!j.is_object() || string_field(j, "ph") != "X") continue;
    const std::string cat = string_field(j, "cat");
    const bool op = cat == "Operator" || cat == "cpu_op";
    if (!op && cat != "user_annotation" && cat != "python_function") continue;
    Event e;
    e.name = string_field(j, "name");
    e.op = op;
    // Clamped so that ts + dur cannot overflow (Kineto's are microseconds, far below 2^61).
    constexpr int64_t kMaxTime = int64_t(1) << 61;
    e.ts = std::clamp<int64_t>(integer_field(j, "ts"), 0, kMaxTime);
    e.dur = std::clamp<int64_t>(integer_field(j, "dur"), 0, kMaxTime);
    const auto args = j.find("args");
    e.args = args != j.end() && args->is_object() ? *args : json::object();
    const json tid = j.contains("tid") ? j["tid"] : json();
    threads[tid.is_string() ? tid.get<std::string>() : tid.dump()].push_back(std::move(e));
    r.operator_events += op;
  }
  return threads;
}

// The layer after call i: among the next few calls that start once it has ended, the first
// whose input is 4-D (wrappers such as ProfilerStep#N enclose everything, so "top-level"
// cannot be relied on).
std::vector<int64_t> next_layer_input(const std::vector<const OpEvent*>& calls, size_t i) {
  const Event& e = *calls[i]->event;
  for (size_t j = i + 1; j < calls.size() && j < i + 64; ++j) {
    const Event& n = *calls[j]->event;
    if (n.ts >= e.end() && input_dims(n.args, 0).size() == 4) return input_dims(n.args, 0);
  }
  return {};
}

// Unique case names: the module path, then path.<op>, path.<op>.2, ...; trace.<n>.<op> without one.
class Namer {
 public:
  std::string name(const std::string& module, const std::string& op, size_t index) {
    if (module.empty()) return take("trace." + std::to_string(index) + "." + op);
    if (!used_.count(module)) return take(module);
    std::string name = module + "." + op;
    for (int k = 2; used_.count(name); ++k) name = module + "." + op + "." + std::to_string(k);
    return take(name);
  }

 private:
  std::string take(const std::string& name) {
    used_.insert(name);
    return name;
  }
  std::set<std::string> used_;
};

struct Importer {
  bool keep_all;
  TraceImport& r;
  std::set<std::string> seen;  // case lines already imported
  Namer namer;

  void add(const std::vector<const OpEvent*>& calls, size_t i) {
    const OpEvent& c = *calls[i];
    const Event& e = *c.event;
    const std::vector<int64_t> next = next_layer_input(calls, i);
    Converted conv;
    try {
      conv = convert(e, next.empty() ? nullptr : &next);
    } catch (const Error& err) {  // e.g. a negative dimension: this call is skipped, not the trace
      conv = skip(err.message());
    }
    Case k;
    try {
      if (!conv.line.empty()) k.line = canonical_line(conv.line);
    } catch (const Error& err) {
      conv = skip(err.message());
    }
    if (conv.line.empty()) {
      // Inner calls of an op with no case (aten::cudnn_convolution in aten::conv2d) add nothing.
      if (c.outermost || supported(e.name)) ++r.skipped[{e.name, conv.skip_reason}];
      return;
    }
    ++r.calls;
    k.inferred = conv.inferred;
    if (!keep_all && !seen.insert(k.line + (k.inferred ? " inferred" : "")).second) {
      ++r.duplicates;
      return;
    }
    k.name = namer.name(c.module, op_name_of(k.line), r.cases.size());
    r.module_names = r.module_names || !c.module.empty();
    r.cases.push_back(std::move(k));
  }
};

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

  TraceImport r;
  std::map<std::string, std::vector<Event>> threads = read_events(*events, r);
  const StepMarks marks = step_marks(threads);
  Importer importer{keep_all, r, {}, {}};
  for (auto& [tid, thread_events] : threads) {
    const std::vector<OpEvent> calls = calls_of_thread(thread_events);
    std::vector<const OpEvent*> taken;  // the forward pass's calls, or every call with keep_all
    for (const OpEvent& c : calls) {
      const Part part = keep_all ? Part::forward : part_of_step(c, marks);
      if (part == Part::forward) {
        taken.push_back(&c);
      } else if (supported(c.event->name)) {
        ++r.outside_forward[part_name(part)];
      }
    }
    for (size_t i = 0; i < taken.size(); ++i) importer.add(taken, i);
  }
  return r;
}

std::string skipped_table(const TraceImport& r, size_t max_rows) {
  if (r.skipped.empty()) return "";
  std::vector<std::tuple<int64_t, std::string, std::string>> rows;
  for (const auto& [key, n] : r.skipped) rows.emplace_back(n, key.first, key.second);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : a < b;
  });
  const size_t shown = std::min(rows.size(), max_rows);
  size_t op_width = 2, count_width = 5;  // "op", "calls"
  for (size_t i = 0; i < shown; ++i) {
    op_width = std::max(op_width, std::get<1>(rows[i]).size());
    count_width = std::max(count_width, std::to_string(std::get<0>(rows[i])).size());
  }
  auto row = [&](const std::string& op, const std::string& count, const std::string& why) {
    return "  " + op + std::string(op_width - op.size() + 2, ' ') + std::string(count_width - count.size(), ' ') + count + "  " + why + "\n";
  };
  std::string out = row("op", "calls", "why skipped");
  for (size_t i = 0; i < shown; ++i) out += row(std::get<1>(rows[i]), std::to_string(std::get<0>(rows[i])), std::get<2>(rows[i]));
  if (shown < rows.size()) {
    int64_t rest = 0;
    for (size_t i = shown; i < rows.size(); ++i) rest += std::get<0>(rows[i]);
    out += "  ... " + std::to_string(rows.size() - shown) + " more rows, " + std::to_string(rest) + " calls\n";
  }
  return out;
}

}  // namespace parity
