#include "planner/core/step_layout.h"

#include "planner/core/chunking.h"

namespace reshard {
namespace {

// The (offset, size) of part `index` of `extent` split over `group`'s dims,
// outermost first (nested torch.chunk; index in the group's lexicographic
// order).
std::pair<int64_t, int64_t> GroupPart(const Mesh& mesh, const Group& group,
                                      int64_t extent, int64_t index) {
  int64_t stride = 1;
  for (int m : group) stride *= mesh.size(m);
  int64_t offset = 0;
  for (int m : group) {
    stride /= mesh.size(m);
    const int64_t c = (index / stride) % mesh.size(m);
    offset += ChunkOffset(extent, mesh.size(m), c);
    extent = ChunkSize(extent, mesh.size(m), c);
  }
  return {offset, extent};
}

Box WholeBox(const std::vector<int64_t>& shape) {
  return Box{std::vector<int64_t>(shape.size(), 0), shape};
}

// `shape` with dim `d` cut to [offset, offset + size).
Box Slice(const std::vector<int64_t>& shape, int d, int64_t offset,
          int64_t size) {
  Box box = WholeBox(shape);
  box.offset[d] = offset;
  box.extent[d] = size;
  return box;
}

// The blocks of `shape` split along `d` over the group: one per member.
std::vector<Box> SplitOverGroup(const Mesh& mesh, const Group& group,
                                const std::vector<int64_t>& shape, int d) {
  const int64_t n = mesh.GroupSize(group);
  std::vector<Box> boxes;
  boxes.reserve(n);
  for (int64_t j = 0; j < n; ++j) {
    const auto [offset, size] = GroupPart(mesh, group, shape[d], j);
    boxes.push_back(Slice(shape, d, offset, size));
  }
  return boxes;
}

// The members' source boxes stacked along `d` in group order, inside a
// tensor of `out_shape`: where each member's gathered part lands.
std::vector<Box> StackMembers(const std::vector<Box>& member_boxes,
                              const std::vector<int64_t>& out_shape, int d) {
  std::vector<Box> boxes;
  boxes.reserve(member_boxes.size());
  int64_t cursor = 0;
  for (const Box& member : member_boxes) {
    boxes.push_back(Slice(out_shape, d, cursor, member.extent[d]));
    cursor += member.extent[d];
  }
  return boxes;
}

void FillCollective(const Mesh& mesh, absl::Span<const int64_t> global_shape,
                    const Step& step, const std::vector<int64_t>& members,
                    StepLayout& layout) {
  std::vector<Box> member_boxes;
  member_boxes.reserve(members.size());
  for (int64_t q : members) {
    member_boxes.push_back(LocalBox(mesh, step.from, global_shape, q));
  }
  // Member 0 holds the largest block: the group's dims split only the
  // gathered/moved dim, and part 0 of a chunk is the largest.
  layout.block_shape =
      PaddedBlockShape(mesh, step.transition(), member_boxes[0].extent);
  switch (step.op) {
    case StepOp::kAllGather:
      layout.send = {WholeBox(layout.in_shape)};
      layout.recv =
          StackMembers(member_boxes, layout.out_shape, *step.src_tensor_dim);
      break;
    case StepOp::kAllReduce:
      layout.send = {WholeBox(layout.in_shape)};
      layout.recv = {WholeBox(layout.out_shape)};
      break;
    case StepOp::kReduceScatter:
      layout.send = SplitOverGroup(mesh, step.group, layout.in_shape,
                                   *step.dst_tensor_dim);
      layout.recv = {WholeBox(layout.out_shape)};
      break;
    default:  // kAllToAll
      layout.send = SplitOverGroup(mesh, step.group, layout.in_shape,
                                   *step.dst_tensor_dim);
      layout.recv =
          StackMembers(member_boxes, layout.out_shape, *step.src_tensor_dim);
      break;
  }
}

void FillLocal(const Mesh& mesh, absl::Span<const int64_t> global_shape,
               const Step& step, int64_t position, StepLayout& layout) {
  switch (step.op) {
    case StepOp::kChunk: {
      const int b = *step.dst_tensor_dim;
      const auto [offset, size] =
          GroupPart(mesh, step.group, layout.in_shape[b], layout.index);
      layout.send = {Slice(layout.in_shape, b, offset, size)};
      layout.recv = {WholeBox(layout.out_shape)};
      break;
    }
    case StepOp::kPartition:
      // Partition to sum: the member at index 0 keeps the value, the others
      // hold zeros; avg/max/min keep the value everywhere.
      if (step.reduce_op != ReduceOp::kSum || layout.index == 0) {
        layout.send = {WholeBox(layout.in_shape)};
        layout.recv = {WholeBox(layout.out_shape)};
      }
      break;
    default: {  // kShardToPartial: zeros of the whole extent, chunk inside.
      const int a = *step.src_tensor_dim;
      const Box in = LocalBox(mesh, step.from, global_shape, position);
      const Box out = LocalBox(mesh, step.to, global_shape, position);
      layout.send = {WholeBox(layout.in_shape)};
      layout.recv = {Slice(layout.out_shape, a, in.offset[a] - out.offset[a],
                           layout.in_shape[a])};
      break;
    }
  }
}

}  // namespace

int64_t PaddedBlockExtent(const Mesh& mesh, const Transition& t,
                          absl::Span<const int64_t> extents, int tensor_dim) {
  const bool split = (t.op == StepOp::kReduceScatter ||
                      t.op == StepOp::kAllToAll || t.op == StepOp::kChunk) &&
                     tensor_dim == *t.dst_tensor_dim;
  return split ? LargestGroupPart(mesh, t.group, extents[tensor_dim])
               : extents[tensor_dim];
}

std::vector<int64_t> PaddedBlockShape(const Mesh& mesh, const Transition& t,
                                      absl::Span<const int64_t> extents) {
  std::vector<int64_t> shape(extents.size());
  for (size_t d = 0; d < extents.size(); ++d) {
    shape[d] = PaddedBlockExtent(mesh, t, extents, static_cast<int>(d));
  }
  return shape;
}

int64_t PaddedBlockNumel(const Mesh& mesh, const Transition& t,
                         absl::Span<const int64_t> extents) {
  int64_t local = 1;
  for (int64_t e : extents) local *= e;
  return PaddedBlockNumelOf(mesh, t, extents, local);
}

WireBlocks CollectiveWireBlocks(StepOp op, int64_t group_size) {
  switch (op) {
    case StepOp::kAllGather:
      return {1, group_size};
    case StepOp::kReduceScatter:
      return {group_size, 1};
    case StepOp::kAllToAll:
      return {group_size, group_size};
    default:
      return {1, 1};
  }
}

int64_t StepLayout::BlockNumel() const {
  int64_t numel = 1;
  for (int64_t e : block_shape) numel *= e;
  return numel;
}

StepLayout MakeStepLayout(const Mesh& mesh,
                          absl::Span<const int64_t> global_shape,
                          const Step& step, int64_t position) {
  StepLayout layout;
  layout.in_shape = LocalBox(mesh, step.from, global_shape, position).extent;
  layout.out_shape = LocalBox(mesh, step.to, global_shape, position).extent;
  const std::vector<int64_t> members =
      mesh.GroupPositions(position, step.group);
  layout.group_size = static_cast<int64_t>(members.size());
  layout.index = mesh.IndexInGroup(position, step.group);
  if (IsCollective(step.op)) {
    FillCollective(mesh, global_shape, step, members, layout);
  } else {
    FillLocal(mesh, global_shape, step, position, layout);
  }
  return layout;
}

}  // namespace reshard
