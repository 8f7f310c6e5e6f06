#pragma once
// faulty:<defect>[:<n>] — a test backend: the reference with one planted defect, so tests can
// check that compare catches it and bisect points at exactly the layer that holds it. The
// defect strikes the n-th call (default 1, counted from the start of a model run, or of the
// process) that it applies to; every other call is the reference's.
//   pad           conv2d with padding: reads the input one row too high (padding off by one)
//   bias          conv2d with bias: output channel OC/2 gets bias + 0.05
//   silu16        silu: computed in float16
//   nan           silu: output element 0 is NaN
//   nonzero_swap  nonzero with 2+ rows: rows 0 and 1 swapped
//   nms_tie       nms: the first two kept boxes of equal score in swapped order (a legitimate
//                 tie order: compare must pass it)
//   nms_drop      nms of 1+ boxes: the first kept box left out of the keep list
//   cat_offset    cat of 2+ inputs: the second input written one element late
//   ktail         conv2d: the last term of every dot product left out (the last tap of the last
//                 input channel)
//   tf32          conv2d: x and w rounded to TF32 (10 mantissa bits, round to nearest even), as
//                 tensor cores do under torch.backends.cudnn.allow_tf32; products and sums exact
//   fp16, bf16    conv2d: x, w and the output rounded to float16 / bfloat16
// The precision defects (tf32, fp16, bf16) strike every conv2d call unless given a call number.
#include <memory>
#include <string>

#include "kernels/backend.h"

namespace parity {

// Throws parity::Error for an unknown defect.
std::unique_ptr<Backend> make_faulty_backend(const std::string& name);

}  // namespace parity
