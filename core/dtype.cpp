#include "core/dtype.h"

namespace parity {

namespace {
struct DTypeInfo {
  DType dtype;
  size_t size;
  std::string_view name;
  std::string_view descr;
};

constexpr DTypeInfo kInfo[] = {
    {DType::Float16, 2, "float16", "<f2"}, {DType::Float32, 4, "float32", "<f4"},
    {DType::Float64, 8, "float64", "<f8"}, {DType::Int32, 4, "int32", "<i4"},
    {DType::Int64, 8, "int64", "<i8"},     {DType::UInt8, 1, "uint8", "|u1"},
    {DType::Bool, 1, "bool", "|b1"},
};

const DTypeInfo& info(DType dt) { return kInfo[static_cast<size_t>(dt)]; }
}  // namespace

size_t dtype_size(DType dt) { return info(dt).size; }
std::string_view dtype_name(DType dt) { return info(dt).name; }
std::string_view dtype_npy_descr(DType dt) { return info(dt).descr; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo) {
    if (i.name == name) return i.dtype;
  }
  return std::nullopt;
}

bool is_floating(DType dt) {
  return dt == DType::Float16 || dt == DType::Float32 || dt == DType::Float64;
}

}  // namespace parity
