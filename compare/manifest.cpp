// manifest.json as parse_manifest reads it (docs/MANIFEST.md): each field with its default, and
// the checks that make a hand-written manifest fail on opening, one line naming the layer and the
// field, instead of half way through a compare (an empty params used to surface only once values
// differed, with no layer named).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "compare/dump_reader.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/json_nesting.h"
#include "core/printable.h"
#include "kernels/backend.h"

namespace parity {

namespace {

using nlohmann::json;

// A field's problem as one line: `<at> "<key>": <problem>`, `at` locating the object holding it
// within its layer ("inputs[1]"), empty for the layer or the manifest itself.
[[noreturn]] void bad(const std::string& at, const std::string& key, const std::string& problem) {
  throw Error((at.empty() ? "" : at + " ") + "\"" + key + "\": " + problem);
}

const json* find(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& required(const json& obj, const std::string& at, const char* key) {
  if (const json* v = find(obj, key)) return *v;
  bad(at, key, "missing (required)");
}

// Names, roles, files and the like: a few hundred bytes in any real dump. Longer is refused
// rather than echoed into every message and report row.
constexpr size_t kMaxName = 4096;
// A call line (params) may carry a long argument list; a run field is shown cut to this.
constexpr size_t kMaxLine = size_t(1) << 20;
constexpr size_t kMaxRunValueShown = 1000;
constexpr size_t kMaxAlsoFrom = 256;  // parity_torch writes at most 64

std::string string_of(const json& v, const std::string& at, const char* key, size_t max = kMaxName) {
  if (!v.is_string()) bad(at, key, "not a string");
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() > max) bad(at, key, "longer than " + std::to_string(max) + " bytes");
  return s;
}

// A field parity prints (a layer name, an op, a role): control characters and bytes that are not
// UTF-8 escaped when read (core/printable.h), so no table, page, JSON report or message quoting
// it can be rewritten by it. Both dumps are read alike, so names still pair.
std::string text_of(const json& v, const std::string& at, const char* key, size_t max = kMaxName) {
  return printable(string_of(v, at, key, max), true);
}

// nlohmann's own conversion would turn 1e30 into an int64 with undefined behaviour.
int64_t integer_of(const json& v, const std::string& at, const char* key) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))) bad(at, key, "not an integer");
  return v.get<int64_t>();
}

std::string optional_string(const json& obj, const std::string& at, const char* key, std::string fallback = "") {
  const json* v = find(obj, key);
  return v ? text_of(*v, at, key) : fallback;
}

// A misspelt optional field would silently read as its default ("sorce": an input no layer
// produced), so fields outside the schema are refused; free-form information goes in "run".
void only_known(const json& obj, const std::string& at, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : obj.items()) {
    if (std::none_of(known.begin(), known.end(), [&key = key](const char* k) { return key == k; })) {
      std::string names;
      for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      bad(at, key, "unknown field (known: " + names + ")");
    }
  }
}

std::string dtype_field(const json& j, const std::string& at) {
  const json* v = find(j, "dtype");
  if (!v) return "";
  const std::string dtype = string_of(*v, at, "dtype");
  if (!dtype_from_name(dtype)) bad(at, "dtype", "unknown dtype \"" + dtype + "\"");
  return dtype;
}

// An array of integers; for a shape, none negative and their product within int64 (Shape's check).
std::vector<int64_t> integers_of(const json& v, const std::string& at, const char* key, bool shape) {
  if (!v.is_array()) bad(at, key, "not an array");
  std::vector<int64_t> out;
  for (const json& d : v) out.push_back(integer_of(d, at, key));
  if (shape) {
    try {
      Shape{out};
    } catch (const Error& e) {
      bad(at, key, e.message());
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> shape_field(const json& j, const std::string& at) {
  const json* v = find(j, "shape");
  if (!v) return std::nullopt;
  return integers_of(*v, at, "shape", true);
}

// A required list of integers within a view step: at most 64 of them (integers_of).
std::vector<int64_t> via_ints(const json& step, const std::string& at, const char* key, bool shape) {
  const json& v = required(step, at, key);
  if (!v.is_array() || v.size() > 64) bad(at, key, "not an array of at most 64 integers");
  return integers_of(v, at, key, shape);
}

// The manifest's "via" (docs/MANIFEST.md): the views and copies from the source output to this input.
std::vector<ViaStep> via_field(const json& j, const std::string& at) {
  const json* v = find(j, "via");
  if (!v || v->is_null()) return {};
  if (!v->is_array()) bad(at, "via", "not an array");
  std::vector<ViaStep> steps;
  for (size_t k = 0; k < v->size(); ++k) {
    const json& step = (*v)[k];
    const std::string where = at + " via[" + std::to_string(k) + "]";
    if (!step.is_object()) bad(where, "op", "the step is not an object");
    only_known(step, where, {"op", "view", "cast"});
    ViaStep s;
    s.op = optional_string(step, where, "op");
    if (const json* view = find(step, "view")) {
      if (!view->is_object()) bad(where, "view", "not an object");
      only_known(*view, where + " view", {"base_shape", "base_strides", "shape", "strides", "offset"});
      s.view = true;
      s.base_shape = via_ints(*view, where + " view", "base_shape", true);
      s.base_strides = via_ints(*view, where + " view", "base_strides", false);
      s.shape = via_ints(*view, where + " view", "shape", true);
      s.strides = via_ints(*view, where + " view", "strides", false);
      s.offset = integer_of(required(*view, where + " view", "offset"), where + " view", "offset");
      if (s.base_shape.size() != s.base_strides.size() || s.shape.size() != s.strides.size()) {
        bad(where + " view", "strides", "not one stride per dimension");
      }
    }
    s.cast = optional_string(step, where, "cast");
    if (s.view && !s.cast.empty()) bad(where, "cast", "a step is a view or a copy, not both");
    steps.push_back(std::move(s));
  }
  return steps;
}

std::string source_field(const json& j, const std::string& at) {
  const json* v = find(j, "source");
  if (!v || v->is_null()) return "";
  const std::string source = text_of(*v, at, "source");
  const size_t colon = source.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == source.size()) {
    bad(at, "source", "\"" + source + "\" is not \"<layer>:<role>\" (or null)");
  }
  return source;
}

// The dtype and shape the manifest lists agree with the file's header; those it leaves out are
// the header's.
void describe_from_header(DumpTensorInfo& t, bool has_dtype, bool has_shape, const std::string& at, const TensorHeaders& headers) {
  if (!headers) {
    if (!has_dtype || !has_shape) bad(at, has_dtype ? "shape" : "dtype", "missing, and no file is read here to take it from");
    return;
  }
  NpyHeaderInfo h;
  try {
    h = headers(t.file);
  } catch (const Error& e) {
    throw Error(at + " \"file\": " + e.message()).file(e.file_path());
  }
  const std::string dtype(dtype_name(h.dtype));
  if (!has_dtype) t.dtype = dtype;
  if (!has_shape) t.shape = h.shape.dims();
  if (t.dtype != dtype || t.shape != h.shape.dims()) {
    throw Error(at + ": " + t.file + " holds " + dtype + " " + h.shape.str() + ", the manifest says " + t.dtype + " " +
                Shape(t.shape).str());
  }
}

DumpTensorInfo tensor_info(const json& j, const std::string& at, const std::string& default_role, const TensorHeaders& headers) {
  if (!j.is_object()) throw Error(at + ": not an object");
  only_known(j, at, {"role", "file", "dtype", "shape", "source", "hash", "derived", "via", "to_python", "strided", "cast_from", "also_from"});
  DumpTensorInfo t;
  t.file = string_of(required(j, at, "file"), at, "file");
  // A manifest names files of its own folder only: never a path that reaches outside it.
  if (!is_plain_name(t.file)) bad(at, "file", "\"" + t.file + "\" is not a plain file name in the dump folder");
  t.role = optional_string(j, at, "role", default_role);
  if (t.role.empty()) bad(at, "role", "empty");
  t.dtype = dtype_field(j, at);
  const std::optional<std::vector<int64_t>> shape = shape_field(j, at);
  if (shape) t.shape = *shape;
  t.source = source_field(j, at);
  t.hash = optional_string(j, at, "hash");
  if (!t.hash.empty() && !is_content_hash(t.hash)) bad(at, "hash", "malformed \"" + t.hash + "\" (expected xxh3:<16 hex digits>, or xxh64: from older dumps)");
  if (const json* v = find(j, "derived")) {
    if (!v->is_boolean()) bad(at, "derived", "not a boolean");
    t.derived = v->get<bool>();
  }
  t.via = via_field(j, at);
  if (const json* v = find(j, "via")) t.has_via = !v->is_null();
  if (const json* v = find(j, "to_python")) {
    if (!v->is_boolean()) bad(at, "to_python", "not a boolean");
    t.to_python = v->get<bool>();
  }
  if (const json* v = find(j, "strided")) {
    if (!v->is_boolean()) bad(at, "strided", "not a boolean");
    t.strided = v->get<bool>();
  }
  t.cast_from = optional_string(j, at, "cast_from");
  if (!t.cast_from.empty() && t.cast_from != "float16" && t.cast_from != "bfloat16") {
    bad(at, "cast_from", "\"" + t.cast_from + "\" is neither float16 nor bfloat16");
  }
  if (t.has_via && !t.derived) bad(at, "via", "given for an input that is not derived");
  if (const json* v = find(j, "also_from")) {
    if (!v->is_array() || v->size() > kMaxAlsoFrom) bad(at, "also_from", "not an array of at most " + std::to_string(kMaxAlsoFrom) + " sources");
    for (const json& s : *v) {
      const std::string source = s.is_string() ? s.get<std::string>() : std::string();
      const size_t colon = source.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == source.size()) bad(at, "also_from", "an item is not \"<layer>:<role>\"");
      t.also_from.push_back(source);
    }
    if (!t.also_from.empty() && (!t.derived || t.source.empty())) bad(at, "also_from", "given for an input that is not derived from a source");
  }
  describe_from_header(t, !t.dtype.empty(), shape.has_value(), at, headers);
  return t;
}

std::vector<DumpTensorInfo> tensor_list(const json& l, const char* list, bool required_list, const std::vector<TensorSpec>& specs,
                                        const TensorHeaders& headers) {
  std::vector<DumpTensorInfo> out;
  const json* v = required_list ? &required(l, "", list) : find(l, list);
  if (!v) return out;
  if (!v->is_array()) bad("", list, "not an array");
  std::set<std::string> roles;
  for (size_t k = 0; k < v->size(); ++k) {
    const std::string at = std::string(list) + "[" + std::to_string(k) + "]";
    // Inputs of a known op default to the roles its line gives them (x, w, b), so the judge and
    // the A/B pairing of inputs see the names parity's own dumps use.
    const std::string fallback =
        list[0] == 'o' ? output_role(k) : k < specs.size() ? specs[k].name : "in" + std::to_string(k);
    out.push_back(tensor_info((*v)[k], at, fallback, headers));
    // "<layer>:<role>" names one output; A/B pairing names one input.
    if (!roles.insert(out.back().role).second) bad(at, "role", "\"" + out.back().role + "\" is listed twice");
  }
  return out;
}

// A known op's recorded inputs are the ones its line names, in its order: otherwise the judge
// would refuse them only once the layer's values differ. float16 passes for float32, since the
// judge widens it (docs/DESIGN.md, "Precision").
void check_against_line(const std::vector<DumpTensorInfo>& inputs, const std::vector<TensorSpec>& specs) {
  if (inputs.empty()) return;  // not recorded: the layer is judged by values only
  if (inputs.size() != specs.size()) {
    std::string names;
    for (const TensorSpec& s : specs) names += (names.empty() ? "" : ", ") + s.name;
    bad("", "inputs", std::to_string(inputs.size()) + " listed, the op line names " + std::to_string(specs.size()) + " (" + names + ")");
  }
  for (size_t k = 0; k < specs.size(); ++k) {
    const DumpTensorInfo& t = inputs[k];
    const TensorSpec& s = specs[k];
    const std::string at = "inputs[" + std::to_string(k) + "]";
    if (t.role != s.name) bad(at, "role", "\"" + t.role + "\", the op line's input " + std::to_string(k) + " is \"" + s.name + "\"");
    const std::string want(dtype_name(s.dtype));
    if (t.dtype != want && !(t.dtype == "float16" && s.dtype == DType::Float32)) {
      bad(at + " (" + t.role + ")", "dtype", t.dtype + ", the op line says " + want);
    }
    if (t.shape != s.shape.dims()) bad(at + " (" + t.role + ")", "shape", Shape(t.shape).str() + ", the op line says " + s.shape.str());
  }
}

// Whitespace as op_name_of splits a line on it.
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// "op" and "params": the op is the params' first word; a known op's params parse (kernels/
// backend.h canonical_line), and an unknown op's default to the op alone. Returns the inputs the
// line names (none for an unknown op).
std::vector<TensorSpec> read_call(const json& l, DumpLayer& layer) {
  layer.op = string_of(required(l, "", "op"), "", "op");
  if (layer.op.empty() || std::any_of(layer.op.begin(), layer.op.end(), is_space)) bad("", "op", "\"" + layer.op + "\" is not one word");
  layer.op = printable(layer.op);
  const bool known = is_known_op(layer.op);
  if (!find(l, "params") && known) bad("", "params", "missing (required for " + layer.op + ", an op parity knows)");
  const json* params = find(l, "params");
  layer.line = params ? string_of(*params, "", "params", kMaxLine) : layer.op;
  // Whitespace of any kind separates a line's fields (a tab, a newline): kept as spaces, before
  // other control characters are escaped.
  std::replace_if(layer.line.begin(), layer.line.end(), is_space, ' ');
  layer.line = printable(layer.line);
  if (std::all_of(layer.line.begin(), layer.line.end(), is_space)) bad("", "params", "empty");
  if (const std::string first = op_name_of(layer.line); first != layer.op) {
    bad("", "params", "starts with \"" + first + "\", the op is \"" + layer.op + "\"");
  }
  if (!known) return {};
  try {
    layer.call = std::make_shared<const Call>(layer.line);
    return layer.call->inputs();
  } catch (const Error& e) {
    bad("", "params", e.what());
  }
}

DumpLayer layer_of(const json& l, size_t position, const TensorHeaders& headers) {
  DumpLayer layer;
  std::string label = std::to_string(position);
  try {
    if (!l.is_object()) throw Error("not an object");
    layer.name = text_of(required(l, "", "name"), "", "name");
    if (layer.name.empty()) bad("", "name", "empty");
    label += " (" + layer.name + ")";
    only_known(l, "", {"index", "name", "op", "params", "time_ms", "kernels_in", "inputs", "outputs"});
    const json* index = find(l, "index");
    layer.index = index ? integer_of(*index, "", "index") : int64_t(position);
    if (layer.index < 0) bad("", "index", "negative (" + std::to_string(layer.index) + ")");
    const std::vector<TensorSpec> specs = read_call(l, layer);
    if (const json* t = find(l, "time_ms")) {
      if (!t->is_number()) bad("", "time_ms", "not a number");
      layer.time_ms = t->get<double>();
    }
    layer.kernels_in = optional_string(l, "", "kernels_in");
    if (!layer.kernels_in.empty() && layer.kernels_in != "float32" && layer.kernels_in != "tf32" && layer.kernels_in != "float16" &&
        layer.kernels_in != "bfloat16") {
      bad("", "kernels_in", "\"" + layer.kernels_in + "\" is none of float32, tf32, float16, bfloat16");
    }
    layer.inputs = tensor_list(l, "inputs", false, specs, headers);
    layer.outputs = tensor_list(l, "outputs", true, specs, headers);
    if (is_known_op(layer.op)) check_against_line(layer.inputs, specs);
  } catch (Error& e) {
    e.layer(label);
    throw;
  }
  return layer;
}

// Values as text: strings as they are, numbers (and anything else) as their JSON, made printable
// and cut to kMaxRunValueShown bytes (saying how long they were): "run" takes any keys, and its
// values are echoed in reports. Nesting was bounded before parsing (check_json_depth).
std::map<std::string, std::string> run_of(const json& run) {
  if (!run.is_object()) bad("", "run", "not an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : run.items()) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > kMaxRunValueShown) text = text.substr(0, kMaxRunValueShown) + "... (" + std::to_string(text.size()) + " bytes)";
    out[printable(key.size() > kMaxName ? key.substr(0, kMaxName) : key, true)] = printable(text);
  }
  return out;
}

// The index of the layer `source` ("<layer>:<role>") names among those before it (`latest`: by
// name, the most recent), when it has that output; -1 otherwise.
int64_t producer_of(const std::string& source, const std::map<std::string, int64_t>& latest, const std::vector<DumpLayer>& layers) {
  const size_t colon = source.rfind(':');
  if (colon == std::string::npos) return -1;
  const auto it = latest.find(source.substr(0, colon));
  if (it == latest.end()) return -1;
  for (const DumpTensorInfo& o : layers[size_t(it->second)].outputs) {
    if (o.role == source.substr(colon + 1)) return it->second;
  }
  return -1;
}

// Repeated names (a case file may reuse one): a layer is its name's n-th occurrence, and a
// source names the most recent earlier layer of that name.
void resolve_layers(std::vector<DumpLayer>& layers) {
  std::map<std::string, int64_t> count, latest;
  for (size_t i = 0; i < layers.size(); ++i) {
    DumpLayer& l = layers[i];
    for (DumpTensorInfo& t : l.inputs) {
      t.source_layer = producer_of(t.source, latest, layers);
      for (const std::string& s : t.also_from) t.also_from_layers.push_back(producer_of(s, latest, layers));
    }
    l.occurrence = count[l.name]++;
    latest[l.name] = int64_t(i);
  }
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

Dump parse_manifest(std::string_view text, const std::string& manifest, const TensorHeaders& headers) {
  Dump d;
  d.dir = parent_of(manifest);
  try {
    check_json_depth(text);
    const json j = json::parse(text);
    if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || j["format"] != "parity-dump") {
      throw Error("not a parity dump manifest (format is not parity-dump)");
    }
    if (!j.contains("version") || j["version"] != 1) throw Error("unsupported dump version " + (j.contains("version") ? j["version"].dump() : "(none)"));
    only_known(j, "", {"format", "version", "model", "backend", "device", "seed", "tool_version", "run", "layers"});
    d.model = optional_string(j, "", "model");
    d.backend = optional_string(j, "", "backend");
    d.device = optional_string(j, "", "device");
    d.tool_version = optional_string(j, "", "tool_version");
    if (const json* seed = find(j, "seed")) {
      if (!seed->is_number_unsigned()) bad("", "seed", "not an unsigned integer");
      d.seed = seed->get<uint64_t>();
    }
    if (const json* run = find(j, "run")) d.run = run_of(*run);
    const json& layers = required(j, "", "layers");
    if (!layers.is_array()) bad("", "layers", "not an array");
    for (size_t i = 0; i < layers.size(); ++i) d.layers.push_back(layer_of(layers[i], i, headers));
    resolve_layers(d.layers);
  } catch (const json::exception& e) {
    throw Error(std::string("malformed manifest: ") + e.what()).file(manifest);
  } catch (Error& e) {
    e.file(manifest);
    throw;
  }
  return d;
}

}  // namespace parity
