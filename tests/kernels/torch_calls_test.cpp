// The table of torch calls (python/parity_torch/torch_calls.tsv, kernels/torch_calls.h): every row
// reads, and a call is found by any name Python gives it.
#include <gtest/gtest.h>

#include <set>

#include "kernels/torch_calls.h"

namespace parity {
namespace {

TEST(TorchCalls, EveryRowReadsAndNamesOneCall) {
  const std::vector<TorchCall>& rows = torch_calls();
  ASSERT_GT(rows.size(), 200u);
  std::set<std::string> names;
  for (const TorchCall& c : rows) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    // A call run again has an operator; one with a bound is run again.
    if (c.bound == TorchBound::Sum || c.bound == TorchBound::Softmax || c.bound == TorchBound::Steps || c.arithmetic) {
      EXPECT_FALSE(c.aten.empty()) << c.name;
    }
    if (!c.dtype.empty()) {
      EXPECT_TRUE(c.cast) << c.name;
    }
  }
}

TEST(TorchCalls, InPlaceFormsAndOperatorsReadAsTheCall) {
  EXPECT_EQ(torch_call_name("torch.Tensor.add_"), "add");
  EXPECT_EQ(torch_call_name("torch.Tensor.__iadd__"), "add");
  EXPECT_EQ(torch_call_name("torch.Tensor.__matmul__"), "matmul");
  EXPECT_EQ(torch_call_name("torch.Tensor.__rsub__"), "rsub");
  EXPECT_TRUE(torch_call("torch.Tensor.__rsub__")->reflected);
  EXPECT_EQ(torch_call_name("torch.Tensor.__bool__"), "__bool__");  // a read into Python, not the cast x.bool()
  EXPECT_TRUE(torch_call("torch.Tensor.__bool__")->python_read);
  EXPECT_EQ(torch_call("torch.Tensor.bool")->dtype, "bool");
  EXPECT_TRUE(torch_call("torch.Tensor.fill_")->fills);
  EXPECT_TRUE(torch_call("torch.empty_like")->uninitialised);
  EXPECT_TRUE(torch_call("torch.Tensor.topk")->tied);
  EXPECT_EQ(torch_call("torch.nn.functional.pad")->aten, "pad");
  EXPECT_TRUE(torch_call("torchvision.roi_align")->samples);
  EXPECT_EQ(torch_call("torch.nn.functional.lstm"), torch_call("torch.lstm"));
  EXPECT_TRUE(placement_argument("non_blocking"));
  EXPECT_FALSE(placement_argument("dim"));
  EXPECT_EQ(torch_call("torchvision.ops.nms"), nullptr);
  EXPECT_EQ(torch_call_name("quantized.linear_dynamic"), "");
}

}  // namespace
}  // namespace parity
