// A TensorSpec is the global shape and element type of the tensor being
// redistributed. Create() guarantees every size is >= 1 and that the byte
// size fits in int64, so downstream arithmetic cannot overflow.
#ifndef RESHARD_PLANNER_CORE_TENSOR_SPEC_H_
#define RESHARD_PLANNER_CORE_TENSOR_SPEC_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class DType { kFloat32, kFloat64, kBFloat16, kFloat16, kInt32, kInt64 };

// "float32", "float64", "bfloat16", "float16", "int32", "int64".
absl::string_view DTypeName(DType dtype);
int64_t ItemSize(DType dtype);
// Accepts the names above and the short forms f32, f64, bf16, f16, i32, i64.
std::optional<DType> ParseDType(absl::string_view name);

class TensorSpec {
 public:
  // An empty placeholder (rank 0); only Create() makes usable specs.
  TensorSpec() = default;
  // INVALID_ARGUMENT names `tensor.shape` or `tensor.shape[i]`.
  static absl::StatusOr<TensorSpec> Create(std::vector<int64_t> shape,
                                           DType dtype);

  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return numel_; }
  int64_t itemsize() const { return itemsize_; }

  bool operator==(const TensorSpec& other) const {
    return shape_ == other.shape_ && dtype_ == other.dtype_;
  }

 private:
  std::vector<int64_t> shape_;
  DType dtype_ = DType::kFloat32;
  int64_t itemsize_ = ItemSize(dtype_);  // read on every priced edge
  int64_t numel_ = 1;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_CORE_TENSOR_SPEC_H_
