#include "planner/core/tensor_spec.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/core/dist_state.h"

namespace reshard {
namespace {

struct DTypeInfo {
  DType dtype;
  absl::string_view name;
  absl::string_view short_name;
  int64_t itemsize;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", "f32", 4},
    {DType::kFloat64, "float64", "f64", 8},
    {DType::kBFloat16, "bfloat16", "bf16", 2},
    {DType::kFloat16, "float16", "f16", 2},
    {DType::kInt32, "int32", "i32", 4},
    {DType::kInt64, "int64", "i64", 8},
};

const DTypeInfo& Info(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info;
  }
  return kDTypes[0];
}

}  // namespace

absl::string_view DTypeName(DType dtype) { return Info(dtype).name; }
int64_t ItemSize(DType dtype) { return Info(dtype).itemsize; }

std::optional<DType> ParseDType(absl::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (name == info.name || name == info.short_name) return info.dtype;
  }
  return std::nullopt;
}

absl::StatusOr<TensorSpec> TensorSpec::Create(std::vector<int64_t> shape,
                                              DType dtype) {
  if (shape.empty() || shape.size() > kMaxTensorRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor.shape: rank must be in [1, ", kMaxTensorRank,
                     "], got ", shape.size()));
  }
  TensorSpec spec;
  const int64_t max_bytes = std::numeric_limits<int64_t>::max();
  int64_t bytes = ItemSize(dtype);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor.shape[", i, "]: size must be >= 1, got ", shape[i]));
    }
    if (shape[i] > max_bytes / bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor.shape: the tensor's byte size overflows int64 at dim ", i));
    }
    bytes *= shape[i];
    spec.numel_ *= shape[i];
  }
  spec.shape_ = std::move(shape);
  spec.dtype_ = dtype;
  spec.itemsize_ = ItemSize(dtype);
  return spec;
}

}  // namespace reshard
