#include "kernels/faulty/faulty.h"

#include <atomic>

#include "core/error.h"
#include "kernels/op_traits.h"

namespace parity {

namespace {

// The op and defect named `defect`, from the op folders' traits; null when none has it.
const Defect* find_defect(const std::string& defect, const OpTraits** op) {
  for (const OpTraits& t : op_table()) {
    for (const Defect& d : t.defects) {
      if (d.name == defect) return *op = &t, &d;
    }
  }
  return nullptr;
}

class FaultyBackend : public Backend {
 public:
  FaultyBackend(std::string name, const OpTraits& op, const Defect& defect, int64_t strike)
      : name_(std::move(name)), op_(op), defect_(defect), strike_(strike) {}

  const std::string& name() const override { return name_; }
  std::string unavailable_reason() const override { return ""; }
  bool supports(std::string_view op) const override { return backend("ref").supports(op); }

  void begin_run() const override { calls_ = 0; }
  void end_run() const override {
    if (strike_ > calls_) {
      throw Error("backend " + name_ + " planted nothing: the run made " + std::to_string(calls_.load()) + " " + op_.name +
                  " call(s) the defect '" + defect_.name + "' applies to, so there is no call " + std::to_string(strike_));
    }
  }

  using Backend::run;
  std::vector<Tensor> run(const Call& call, const std::vector<Tensor>& inputs) const override {
    const Backend& ref = backend("ref");
    if (&call.traits() != &op_ || !defect_.applies(call, inputs)) return ref.run(call, inputs);
    // strike_ 0: every call it applies to (the precision defects, unless given a call number).
    if (++calls_ != strike_ && strike_ != 0) return ref.run(call, inputs);
    return defect_.run(call, inputs, [&ref](const Call& c, const std::vector<Tensor>& in) { return ref.run(c, in); });
  }

 private:
  std::string name_;
  const OpTraits& op_;
  const Defect& defect_;
  int64_t strike_;
  mutable std::atomic<int64_t> calls_{0};
};

}  // namespace

std::unique_ptr<Backend> make_faulty_backend(const std::string& name) {
  // faulty:<defect>[:<n>]
  const std::string rest = name.substr(std::string("faulty:").size());
  const size_t colon = rest.find(':');
  const std::string defect = rest.substr(0, colon);
  const OpTraits* op = nullptr;
  const Defect* d = find_defect(defect, &op);
  if (!d) {
    std::string list;
    for (const OpTraits& t : op_table()) {
      for (const Defect& known : t.defects) list += (list.empty() ? "" : " ") + known.name;
    }
    throw Error("backend " + name + ": unknown defect '" + defect + "' (known: " + list + ")");
  }
  int64_t strike = d->strikes == Defect::Strikes::EveryCall ? 0 : 1;
  if (colon != std::string::npos) {
    try {
      strike = std::stoll(rest.substr(colon + 1));
    } catch (const std::exception&) {
      strike = 0;
    }
    if (strike < 1) throw Error("backend " + name + ": the call number after the defect must be 1 or more");
  }
  return std::make_unique<FaultyBackend>(name, *op, *d, strike);
}

namespace {
// Every faulty:<defect>[:<n>] name, each made on first use and kept: its call counter must
// survive between the ops of one run. Listed last of the built-in backends (rank 50).
const BackendFamilyRegistrar kFaulty("faulty:", "faulty:<defect>[:<n>]", make_faulty_backend, 50);
}  // namespace

}  // namespace parity
