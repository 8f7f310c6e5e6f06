// Every op parity knows, in the order YOLOv5 meets them: one line per op, whose traits its own
// folder defines (kernels/op_traits.h).
#include "core/error.h"
#include "kernels/add/add.h"
#include "kernels/argsort/argsort.h"
#include "kernels/cat/cat.h"
#include "kernels/conv2d/conv2d.h"
#include "kernels/detect_decode/detect_decode.h"
#include "kernels/index/index.h"
#include "kernels/max_dim/max_dim.h"
#include "kernels/maxpool2d/maxpool2d.h"
#include "kernels/mul/mul.h"
#include "kernels/nms/nms.h"
#include "kernels/nonzero/nonzero.h"
#include "kernels/op_traits.h"
#include "kernels/sigmoid/sigmoid.h"
#include "kernels/silu/silu.h"
#include "kernels/threshold/threshold.h"
#include "kernels/upsample_nearest2d/upsample_nearest2d.h"

namespace parity {

const std::vector<OpTraits>& op_table() {
  static const std::vector<OpTraits> table = {
      // The network.
      conv2d_traits(), silu_traits(), add_traits(), cat_traits(), maxpool2d_traits(), upsample_nearest2d_traits(),
      sigmoid_traits(), detect_decode_traits(),
      // val.py's post-processing.
      threshold_traits(), nonzero_traits(), index_traits(), max_dim_traits(), argsort_traits(), nms_traits(),
      // Not in YOLOv5's graph: the worked example of adding an op (README).
      mul_traits(),
  };
  return table;
}

const OpTraits& op_traits(std::string_view op) {
  for (const OpTraits& t : op_table()) {
    if (t.name == op) return t;
  }
  std::string known;
  for (const OpTraits& t : op_table()) known += (known.empty() ? "" : " ") + t.name;
  throw Error("unknown op '" + std::string(op) + "' (known: " + known + ")");
}

const OpTraits& op_traits_of(std::string_view line) { return op_traits(op_name_of(line)); }

Call::Call(std::string_view line) : traits_(&op_traits_of(line)) {
  Parsed p = traits_->parse(line);
  params_ = std::move(p.params), type_ = p.type, line_ = std::move(p.line), inputs_ = std::move(p.inputs);
}

const std::string& Call::op() const { return traits_->name; }

}  // namespace parity
