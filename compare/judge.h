#pragma once
// The judge: the one place where a layer's outputs get a verdict. replay, compare, bisect,
// bisect --rerun and golden all call judge_layer, so one difference cannot pass in one command
// and fail in another (docs/DESIGN.md, "Comparing").
//
// A layer has two sides, A and B, each with its call (op line), its outputs and, when they were
// recorded, its inputs. First the outputs are compared element-wise, A against B, under the
// tolerance policy (compare/tolerance.h). An output beyond tolerance, or of another shape or
// dtype, is then judged locally on each side: the judge backend (the reference unless told
// otherwise) runs the side's own call on the side's own inputs, and the side's outputs must
// match what it gives (judge_output). Then:
//   both sides match        PASSED, explained: the difference is what the inputs make of it
//   a side does not match   FAILED: that side (A, B or both) is defective at this layer
//   no local check possible UNCHECKED (inputs not recorded, or the judge cannot run the call)
// The check is symmetric: swapping A and B swaps the defective side and nothing else.
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "compare/precision.h"
#include "compare/tensor_compare.h"
#include "kernels/call.h"

namespace parity {

// How a layer beyond tolerance whose sides each match the judge on their own inputs begins its
// reason: the difference is what each side's inputs make of it.
inline const std::string kMatchesOnOwnInputs = "each side matches the judge on its own inputs: ";

struct ToleranceOverride {
  double atol = 0, rtol = 0;
};

// One side's run as its dump records it (compare --precision auto reads it): what its local
// check judges that side's own kernels at.
struct SideRun {
  std::optional<Precision> precision;  // the run's own precision; none: JudgeOptions::precision
  bool cpu = false;                    // it ran on the CPU
  bool autocast = false;               // under autocast on that device (its reduced-precision ops cast their inputs)
  bool wider = false;  // it computed in float64 and its dump holds float32: its recorded inputs are its own, rounded
};

struct JudgeOptions {
  std::string judge = "ref";                                       // --judge
  Precision precision = Precision::Fp32;                           // --precision
  SideRun runs[2];                                                 // A's and B's (--precision auto)
  // --atol/--rtol: replace the tolerance of every float output, conv2d's bound included.
  std::optional<ToleranceOverride> tolerance;
  // --tol-file: (pattern, tolerance) in file order; a pattern fully matching the layer name or
  // the op name applies, and the last one that applies wins. It replaces the tolerance too.
  std::vector<std::pair<std::regex, ToleranceOverride>> per_layer;
};

// Reads the tolerance file: a JSON object {"<layer or op regex>": {"atol": X, "rtol": Y}, ...},
// entries kept in file order. A missing, mistyped or unknown field is an error naming it.
std::vector<std::pair<std::regex, ToleranceOverride>> read_tolerance_file(const std::string& path);

// The tolerance for output k (of `dtype`) of layer `name`, whose op is `op`, running `call` on
// `inputs` (empty when not at hand: then a dot product falls back to the dtype default) under
// `profile`, with the options' overrides. `call` is null for a line parity cannot read (an
// unknown op): the dtype's tolerance then.
Tolerance layer_tolerance(const JudgeOptions& o, const PrecisionProfile& profile, const std::string& name, const std::string& op,
                          const Call* call, size_t k, DType dtype, const std::vector<Tensor>& inputs);

// Does `actual` hold a correct output k of `call` on `inputs`, given that `expected` is the judge's?
// compare_tensors under `tol`, except where the op's correct answer is not unique: an nms keep
// list passes when it is a valid greedy NMS of the inputs up to score ties and IoUs within 1e-5
// of the threshold; an argsort passes when it is a permutation that sorts its input (ties in any
// order). Either way the reason says what was allowed.
TensorDiff judge_output(const Call& call, size_t k, const std::vector<Tensor>& inputs, const Tensor& expected,
                        const Tensor& actual, const Tolerance& tol);

// An output as stored (a dump's file), for a comparison that streams it instead of holding it:
// `read(offset, n, into)` reads n of its bytes; `check(hash)` takes the hash of all of them as
// read in order and checks it against what the store records (throws when corrupt); `load()`
// reads it whole, checked, for a comparison that cannot stream it.
struct StoredOutput {
  // The data bytes from `offset` on, where they lie (a mapping the side holds), for the next n
  // bytes to be read; the caller reads the file in order, so what lies before may be let go of.
  std::function<const std::byte*(size_t offset, size_t n)> read;
  std::function<void(const std::string& hash)> check;
  std::function<Tensor()> load;
};

struct LayerSide {
  std::string line;                 // the call this side ran
  std::shared_ptr<const Call> call; // `line` read, where the caller read it already (else the judge reads it)
  std::vector<std::string> roles;   // one per output: "out0", ...
  std::vector<Tensor> outputs;
  std::vector<std::string> hashes;  // of the outputs' bytes, computed from them; empty: not known
  // Per output, optional (`read` empty: not stored). Where output k is stored, outputs[k] gives
  // its dtype and shape only (a mapping that is never touched): the element-wise pass streams
  // both sides' (both must be stored), a local check streams the side's against the judge's
  // outputs, or loads it where it cannot (another dtype or shape than the judge's).
  std::vector<StoredOutput> stored;
  std::function<std::vector<Tensor>()> inputs;  // null when the inputs were not recorded
  bool strided_inputs = false;  // the call read some input as a non-contiguous tensor (DumpTensorInfo::strided)
  size_t first_input_rank = 0;  // the dims of its first input, as recorded (0: none)
  // What its kernel computed in, where its outputs were held narrower than written (cast_from):
  // a float32 model's bfloat16 block is judged at bf16 on that side.
  Precision computed_in = Precision::Fp32;
  bool half_inputs = false;  // an input its producer held in a half type (or one held so here)
  // Under autocast, the recording saw every kernel inside the call compute in float32 (DumpLayer::
  // kernels_in): no half tensor inside, as in an add or a GELU between autocast's layers.
  bool float32_kernels = false;
  // Recorded outside autocast in a run that entered it (a region inside forward), a call on float32
  // CUDA tensors whose kernels may have computed in TF32 (DumpLayer::kernels_in "tf32").
  bool tf32_kernels = false;
  // The judge's outputs for this call on these inputs when the caller already has them (replay
  // with A = the judge backend); they are not computed again.
  std::optional<std::vector<Tensor>> judged;
};

// One side's local check: its outputs against the judge run on its own inputs.
struct SideCheck {
  bool ran = false;  // the judge ran on this side's inputs
  bool ok = false;   // and this side's outputs match it
  bool structural = false;  // a mismatch in count, shape or dtype
  bool statistical = false; // within the element-wise bounds but failing the statistical test
  std::string note;  // why not ok, why it could not run, or which freedom a correct answer took (nms, argsort)
};

struct OutputVerdict {
  std::string role;
  bool identical = false;  // the same bytes on both sides (equal hashes computed from the bytes)
  TensorDiff diff;         // A against B, element-wise
  // Effective bits and conv2d's statistical test: for conv2d each side's own (sampled elements
  // against their exact dot products on the side's inputs), the worse of the two, with
  // `stats_side` naming that side; for other ops A against B, and `stats_side` empty.
  PrecisionStats stats;
  std::string stats_side;
};

enum class Sides { None = 0, A = 1, B = 2, Both = 3 };
const char* sides_name(Sides s);  // "", "A", "B", "A and B"

// Where a verdict's time went, in milliseconds of one thread: the element-wise pass (outputs A
// against B: metrics, tolerance, worst element), conv2d's statistical test within it (sampled
// dot products on the inputs), and the local checks (the judge run on each side's inputs).
struct JudgeTiming {
  double elementwise_ms = 0, precision_ms = 0, local_ms = 0;
};

struct LayerVerdict {
  State state = State::Passed;  // PASSED, FAILED, MISTRUSTED or UNCHECKED
  bool structural = false;      // FAILED on count, shape or dtype
  bool differs = false;         // some output beyond tolerance A against B (local checks asked for)
  bool explained = false;       // differs, and each side matches the judge on its own inputs
  SideCheck a, b;
  std::string reason;  // one line: why not a plain PASSED
  std::vector<OutputVerdict> outputs;
  Precision profile = Precision::Fp32;  // the precision profile judged against (coarser when the dtypes are)
  std::string widened;  // "A float32, B float16: compared in float64 under fp16" when dtypes differ
  JudgeTiming timing;

  Sides defective() const;
  const TensorDiff* worst() const;  // the output with the most elements out, then the largest error
  // The first float output's effective precision A against B (null when none has figures).
  const PrecisionStats* precision_stats() const;
};

// `same_inputs`: both sides ran on the same input bytes (replay, golden, rerun; compare when every
// input's hash matches), so the judge runs once.
LayerVerdict judge_layer(const std::string& name, const LayerSide& a, const LayerSide& b, bool same_inputs,
                         const JudgeOptions& o);

// judge_layer in its two steps, for a caller that schedules them apart (compare runs every
// layer's element-wise pass, then the local checks of the layers that need them). The first
// leaves `differs` set, and the first difference as the reason, when local checks are due; the
// second completes such a verdict on the same sides (loaded again: nothing is kept between).
// `same_inputs` is asked only where the answer is used (a dot product's figures, a local check):
// hashing inputs a layer's pass does not read would read their files once more.
LayerVerdict compare_layer_outputs(const std::string& name, const LayerSide& a, const LayerSide& b,
                                   const std::function<bool()>& same_inputs, const JudgeOptions& o);
void check_layer_locally(const std::string& name, const LayerSide& a, const LayerSide& b, const std::function<bool()>& same_inputs,
                         const JudgeOptions& o, LayerVerdict& v);

}  // namespace parity
