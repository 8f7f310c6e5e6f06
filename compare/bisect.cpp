#include "compare/bisect.h"

#include <fmt/format.h>

#include <utility>

#include "compare/layer_sides.h"

namespace parity {

Bisection bisection_of(const CompareResult& r) {
  Bisection b;
  if (r.origin < 0) {
    // Differences no local check could pin on a side: never a confident origin. (With --layers
    // hiding the origin, a propagated row shown is one.)
    for (const LayerReport& l : r.layers) {
      if (l.state == RowState::Structural || l.state == RowState::Unchecked || l.propagated()) {
        b.first_unexplained = &l;
        break;
      }
    }
    return b;
  }
  b.origin = &r.layers[size_t(r.origin)];
  for (const LayerReport& l : r.layers) {
    if (l.propagated()) b.propagated.push_back(l.name);
  }
  for (const int64_t i : r.other_origins) b.other_origins.push_back(&r.layers[size_t(i)]);
  return b;
}

std::vector<std::string> rerun_origin(const Backend& be, const std::string& judge_name, const JudgeOptions& jo, const Dump& a,
                                      const Dump& b, const LayerReport& origin) {
  std::vector<std::string> lines;
  for (const auto& [side, d] : {std::pair<const char*, const Dump*>{"A", &a}, {"B", &b}}) {
    const DumpLayer* l = nullptr;
    for (const DumpLayer& x : d->layers) l = x.name == origin.name && x.occurrence == origin.occurrence ? &x : l;
    if (!l || l->inputs.empty()) continue;
    const std::string what = fmt::format("rerun of {} on {} with {}'s inputs: ", origin.name, be.name(), side);
    // An origin can be a layer of an op parity does not know (an input no layer produced
    // differs): there is nothing to run, which is an answer, not an error.
    if (!be.supports(l->op)) {
      lines.push_back(what + fmt::format("not possible, {} has no {}", be.name(), l->op));
      continue;
    }
    const LayerSide recorded = layer_side(*d, *l);
    LayerSide again;
    again.line = l->line, again.roles = recorded.roles, again.inputs = recorded.inputs;
    again.outputs = be.run(l->line, recorded.inputs());
    const LayerVerdict v = judge_layer(l->name, recorded, again, true, jo);
    if (!v.differs) {
      lines.push_back(what + fmt::format("{} reproduces {}'s output", be.name(), side));
      continue;
    }
    const auto check = [](const SideCheck& c) { return c.ran ? (c.ok ? "matches" : "does not match") : "unchecked"; };
    lines.push_back(what + fmt::format("{} differs from {}'s output; against the judge ({}): {} {}, {} {}", be.name(), side, judge_name,
                                       side, check(v.a), be.name(), check(v.b)));
  }
  return lines;
}

}  // namespace parity
