#include "planner/cross/layout_digest.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/fnv1a.h"
#include "common/json_text.h"
#include "planner/format/plan_format.h"

namespace reshard {

std::string LayoutJson(const Mesh& src_mesh, const Mesh& dst_mesh,
                       const TensorSpec& tensor, const DistState& src,
                       const DistState& dst) {
  return absl::StrCat("{\"src_mesh\":", MeshJson(src_mesh, true),
                      ",\"dst_mesh\":", MeshJson(dst_mesh, true),
                      ",\"tensor\":{\"shape\":[",
                      absl::StrJoin(tensor.shape(), ","),
                      "],\"dtype\":", JsonString(DTypeName(tensor.dtype())),
                      "},\"src\":", JsonString(src.ToString()),
                      ",\"dst\":", JsonString(dst.ToString()), "}");
}

uint64_t LayoutDigest(const Mesh& src_mesh, const Mesh& dst_mesh,
                      const TensorSpec& tensor, const DistState& src,
                      const DistState& dst) {
  return Fnv1a64(LayoutJson(src_mesh, dst_mesh, tensor, src, dst));
}

std::string DigestHex(uint64_t digest) {
  return absl::StrFormat("%016x", digest);
}

}  // namespace reshard
