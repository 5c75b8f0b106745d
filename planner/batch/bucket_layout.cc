#include "planner/batch/bucket_layout.h"

namespace reshard {

BucketLayout MakeBucketLayout(const Mesh& mesh, const Bucket& bucket,
                              absl::Span<const Plan* const> plans,
                              int64_t position) {
  BucketLayout layout;
  layout.members.reserve(bucket.members.size());
  for (const BucketMember& m : bucket.members) {
    const Plan& plan = *plans[m.tensor];
    layout.members.push_back(MakeStepLayout(mesh, plan.tensor.shape(),
                                            plan.steps[m.step], position));
    layout.itemsizes.push_back(plan.tensor.itemsize());
    layout.offsets.push_back(layout.block_bytes);
    layout.block_bytes += layout.MemberBytes(layout.members.size() - 1);
  }
  layout.group_size = mesh.GroupSize(bucket.group);
  layout.index = mesh.IndexInGroup(position, bucket.group);
  return layout;
}

}  // namespace reshard
