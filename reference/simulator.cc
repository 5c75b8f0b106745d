#include "reference/simulator.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/core/chunking.h"
#include "planner/core/local_layout.h"

namespace reshard {
namespace {

// Written into padding so that a plan reading padding produces wrong data.
constexpr int64_t kPadValue = -999983;

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

int64_t Linear(const std::vector<int64_t>& strides,
               const std::vector<int64_t>& index) {
  int64_t lin = 0;
  for (size_t d = 0; d < index.size(); ++d) lin += strides[d] * index[d];
  return lin;
}

// Calls f(a, b, count) for every contiguous innermost run of a box of
// `extent` placed at `a_off` in a tensor of shape `a_shape` and at `b_off`
// in one of shape `b_shape`.
void WalkBox(const std::vector<int64_t>& extent,
             const std::vector<int64_t>& a_shape,
             const std::vector<int64_t>& a_off,
             const std::vector<int64_t>& b_shape,
             const std::vector<int64_t>& b_off,
             const std::function<void(int64_t, int64_t, int64_t)>& f) {
  if (Numel(extent) == 0) return;
  const int rank = static_cast<int>(extent.size());
  const std::vector<int64_t> as = Strides(a_shape);
  const std::vector<int64_t> bs = Strides(b_shape);
  std::vector<int64_t> idx(rank, 0);
  const int64_t a0 = Linear(as, a_off);
  const int64_t b0 = Linear(bs, b_off);
  while (true) {
    f(a0 + Linear(as, idx), b0 + Linear(bs, idx), extent[rank - 1]);
    int d = rank - 2;
    while (d >= 0 && ++idx[d] == extent[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

template <typename T>
LocalTensor<T> Filled(std::vector<int64_t> shape, T value) {
  LocalTensor<T> t;
  t.data.assign(Numel(shape), value);
  t.shape = std::move(shape);
  return t;
}

// Copies the box (`src_off`, `extent`) of `src` to `dst_off` in `dst`.
template <typename T>
void CopyBox(const LocalTensor<T>& src, const std::vector<int64_t>& src_off,
             LocalTensor<T>& dst, const std::vector<int64_t>& dst_off,
             const std::vector<int64_t>& extent) {
  WalkBox(extent, src.shape, src_off, dst.shape, dst_off,
          [&](int64_t a, int64_t b, int64_t n) {
            std::copy_n(src.data.begin() + a, n, dst.data.begin() + b);
          });
}

template <typename T>
T Combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::kMax:
      return std::max(a, b);
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      break;
  }
  return a + b;
}

// Elementwise reduction of equally shaped buffers, then the avg division.
template <typename T>
LocalTensor<T> Reduce(const std::vector<const LocalTensor<T>*>& inputs,
                      ReduceOp op, int64_t avg_divisor) {
  LocalTensor<T> out = *inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    for (size_t k = 0; k < out.data.size(); ++k) {
      out.data[k] = Combine(op, out.data[k], inputs[i]->data[k]);
    }
  }
  int64_t divisor = avg_divisor;
  if (op == ReduceOp::kAvg) divisor *= static_cast<int64_t>(inputs.size());
  if (divisor != 1) {
    for (T& v : out.data) v = v / static_cast<T>(divisor);
  }
  return out;
}

// The (offset, extent) of member `index`'s part when `extent` is split over
// the group's dims, outermost first (nested torch.chunk). A private copy of
// what the core's StepLayout computes, on purpose: a judge that shared the
// code it judges would agree with its bugs.
std::pair<int64_t, int64_t> GroupChunk(const Mesh& mesh, const Group& group,
                                       int64_t extent, int64_t index) {
  std::vector<int64_t> coords(group.size());
  for (int i = static_cast<int>(group.size()) - 1; i >= 0; --i) {
    coords[i] = index % mesh.size(group[i]);
    index /= mesh.size(group[i]);
  }
  int64_t offset = 0;
  for (size_t i = 0; i < group.size(); ++i) {
    const int64_t n = mesh.size(group[i]);
    offset += ChunkOffset(extent, n, coords[i]);
    extent = ChunkSize(extent, n, coords[i]);
  }
  return {offset, extent};
}

// The simulation of one step on one group of member positions.
template <typename T>
class GroupRun {
 public:
  GroupRun(const Mesh& mesh, absl::Span<const int64_t> global_shape,
           const Step& step, std::vector<LocalTensor<T>>& buffers,
           std::vector<int64_t> members)
      : mesh_(mesh),
        shape_(global_shape),
        step_(step),
        buffers_(buffers),
        members_(std::move(members)),
        n_(static_cast<int64_t>(members_.size())) {}

  // Returns each member's new buffer.
  std::vector<LocalTensor<T>> Run() {
    switch (step_.op) {
      case StepOp::kAllGather:
        return AllGather();
      case StepOp::kAllReduce:
        return AllReduce();
      case StepOp::kReduceScatter:
        return ReduceScatter();
      case StepOp::kAllToAll:
        return AllToAll();
      case StepOp::kChunk:
        return Chunk();
      case StepOp::kPartition:
        return Partition();
      case StepOp::kShardToPartial:
        return ShardToPartial();
    }
    return {};
  }

 private:
  const LocalTensor<T>& In(int64_t j) const { return buffers_[members_[j]]; }
  int64_t Extent(int64_t j, int dim) const {
    return LocalBox(mesh_, step_.from, shape_, members_[j]).extent[dim];
  }
  std::vector<int64_t> Zeros() const {
    return std::vector<int64_t>(shape_.size(), 0);
  }

  // Gather: pad every block along `a` to the largest, concatenate, trim.
  std::vector<LocalTensor<T>> AllGather() {
    const int a = *step_.src_tensor_dim;
    int64_t pad = 0;
    for (int64_t j = 0; j < n_; ++j) pad = std::max(pad, Extent(j, a));
    std::vector<int64_t> padded_shape = In(0).shape;
    padded_shape[a] = n_ * pad;
    LocalTensor<T> gathered =
        Filled<T>(padded_shape, static_cast<T>(kPadValue));
    for (int64_t j = 0; j < n_; ++j) {
      std::vector<int64_t> at = Zeros();
      at[a] = j * pad;
      CopyBox(In(j), Zeros(), gathered, at, In(j).shape);
    }
    // Every receiver trims with sizes it derives from coordinates.
    std::vector<int64_t> out_shape = In(0).shape;
    out_shape[a] = 0;
    for (int64_t j = 0; j < n_; ++j) out_shape[a] += Extent(j, a);
    LocalTensor<T> out = Filled<T>(out_shape, T{});
    int64_t cursor = 0;
    for (int64_t j = 0; j < n_; ++j) {
      std::vector<int64_t> from = Zeros(), to = Zeros(), extent = out_shape;
      from[a] = j * pad;
      to[a] = cursor;
      extent[a] = Extent(j, a);
      CopyBox(gathered, from, out, to, extent);
      cursor += extent[a];
    }
    return std::vector<LocalTensor<T>>(n_, out);
  }

  std::vector<LocalTensor<T>> AllReduce() {
    std::vector<const LocalTensor<T>*> inputs;
    for (int64_t j = 0; j < n_; ++j) inputs.push_back(&In(j));
    return std::vector<LocalTensor<T>>(
        n_, Reduce(inputs, step_.reduce_op, step_.avg_divisor));
  }

  // Every member splits its buffer along `b` into n padded blocks; block j
  // of the reduction goes to member j, which trims it.
  std::vector<LocalTensor<T>> ReduceScatter() {
    const int b = *step_.dst_tensor_dim;
    const int64_t extent = In(0).shape[b];
    const int64_t pad = GroupChunk(mesh_, step_.group, extent, 0).second;
    std::vector<int64_t> padded_shape = In(0).shape;
    padded_shape[b] = n_ * pad;
    std::vector<LocalTensor<T>> padded;
    for (int64_t i = 0; i < n_; ++i) {
      LocalTensor<T> p = Filled<T>(padded_shape, static_cast<T>(kPadValue));
      for (int64_t j = 0; j < n_; ++j) {
        const auto [off, size] = GroupChunk(mesh_, step_.group, extent, j);
        std::vector<int64_t> from = Zeros(), to = Zeros(), box = In(i).shape;
        from[b] = off;
        to[b] = j * pad;
        box[b] = size;
        CopyBox(In(i), from, p, to, box);
      }
      padded.push_back(std::move(p));
    }
    std::vector<const LocalTensor<T>*> inputs;
    for (const auto& p : padded) inputs.push_back(&p);
    const LocalTensor<T> reduced =
        Reduce(inputs, step_.reduce_op, step_.avg_divisor);
    std::vector<LocalTensor<T>> outs;
    for (int64_t j = 0; j < n_; ++j) {
      const int64_t index = mesh_.IndexInGroup(members_[j], step_.group);
      const int64_t size = GroupChunk(mesh_, step_.group, extent, index).second;
      std::vector<int64_t> out_shape = In(0).shape, from = Zeros();
      out_shape[b] = size;
      from[b] = index * pad;
      LocalTensor<T> out = Filled<T>(out_shape, T{});
      CopyBox(reduced, from, out, Zeros(), out_shape);
      outs.push_back(std::move(out));
    }
    return outs;
  }

  // Member i sends block j of its buffer (split along `b`, padded along `a`
  // and `b`) to member j, which trims and concatenates along `a`.
  std::vector<LocalTensor<T>> AllToAll() {
    const int a = *step_.src_tensor_dim;
    const int b = *step_.dst_tensor_dim;
    const int64_t extent_b = In(0).shape[b];
    const int64_t pad_b = GroupChunk(mesh_, step_.group, extent_b, 0).second;
    int64_t pad_a = 0;
    for (int64_t i = 0; i < n_; ++i) pad_a = std::max(pad_a, Extent(i, a));
    // sent[i][j]: the padded block member i sends to member j.
    std::vector<std::vector<LocalTensor<T>>> sent(
        n_, std::vector<LocalTensor<T>>(n_));
    for (int64_t i = 0; i < n_; ++i) {
      for (int64_t j = 0; j < n_; ++j) {
        std::vector<int64_t> block_shape = In(i).shape;
        block_shape[a] = pad_a;
        block_shape[b] = pad_b;
        LocalTensor<T> block =
            Filled<T>(block_shape, static_cast<T>(kPadValue));
        const auto [off, size] = GroupChunk(mesh_, step_.group, extent_b, j);
        std::vector<int64_t> from = Zeros(), box = In(i).shape;
        from[b] = off;
        box[b] = size;
        CopyBox(In(i), from, block, Zeros(), box);
        sent[i][j] = std::move(block);
      }
    }
    std::vector<LocalTensor<T>> outs;
    for (int64_t j = 0; j < n_; ++j) {
      const int64_t index = mesh_.IndexInGroup(members_[j], step_.group);
      const int64_t size_b =
          GroupChunk(mesh_, step_.group, extent_b, index).second;
      std::vector<int64_t> out_shape = In(0).shape;
      out_shape[b] = size_b;
      out_shape[a] = 0;
      for (int64_t i = 0; i < n_; ++i) out_shape[a] += Extent(i, a);
      LocalTensor<T> out = Filled<T>(out_shape, T{});
      int64_t cursor = 0;
      for (int64_t i = 0; i < n_; ++i) {
        // Members are listed in group order, so sender i has index i.
        std::vector<int64_t> to = Zeros(), box = out_shape;
        to[a] = cursor;
        box[a] = Extent(i, a);
        CopyBox(sent[i][index], Zeros(), out, to, box);
        cursor += box[a];
      }
      outs.push_back(std::move(out));
    }
    return outs;
  }

  std::vector<LocalTensor<T>> Chunk() {
    const int b = *step_.dst_tensor_dim;
    std::vector<LocalTensor<T>> outs;
    for (int64_t j = 0; j < n_; ++j) {
      const int64_t index = mesh_.IndexInGroup(members_[j], step_.group);
      const auto [off, size] =
          GroupChunk(mesh_, step_.group, In(j).shape[b], index);
      std::vector<int64_t> out_shape = In(j).shape, from = Zeros();
      out_shape[b] = size;
      from[b] = off;
      LocalTensor<T> out = Filled<T>(out_shape, T{});
      CopyBox(In(j), from, out, Zeros(), out_shape);
      outs.push_back(std::move(out));
    }
    return outs;
  }

  std::vector<LocalTensor<T>> Partition() {
    std::vector<LocalTensor<T>> outs;
    for (int64_t j = 0; j < n_; ++j) {
      LocalTensor<T> out = In(j);
      const bool keeper = mesh_.IndexInGroup(members_[j], step_.group) == 0;
      if (step_.reduce_op == ReduceOp::kSum && !keeper) {
        std::fill(out.data.begin(), out.data.end(), T{});
      }
      outs.push_back(std::move(out));
    }
    return outs;
  }

  // Zeros of the extent the group split, with the local chunk at its offset.
  // That extent is the one the rank holds once the group's dims leave the
  // shard order, i.e. under `step.to`.
  std::vector<LocalTensor<T>> ShardToPartial() {
    const int a = *step_.src_tensor_dim;
    std::vector<LocalTensor<T>> outs;
    for (int64_t j = 0; j < n_; ++j) {
      const Box whole = LocalBox(mesh_, step_.to, shape_, members_[j]);
      const Box local = LocalBox(mesh_, step_.from, shape_, members_[j]);
      std::vector<int64_t> out_shape = In(j).shape, to = Zeros();
      out_shape[a] = whole.extent[a];
      to[a] = local.offset[a] - whole.offset[a];
      LocalTensor<T> out = Filled<T>(out_shape, T{});
      CopyBox(In(j), Zeros(), out, to, In(j).shape);
      outs.push_back(std::move(out));
    }
    return outs;
  }

  const Mesh& mesh_;
  absl::Span<const int64_t> shape_;
  const Step& step_;
  std::vector<LocalTensor<T>>& buffers_;
  std::vector<int64_t> members_;
  int64_t n_;
};

}  // namespace

template <typename T>
absl::Status RunStep(const Mesh& mesh, absl::Span<const int64_t> global_shape,
                     const Step& step, std::vector<LocalTensor<T>>& buffers) {
  if (static_cast<int64_t>(buffers.size()) != mesh.world_size()) {
    return absl::InvalidArgumentError("one buffer per mesh position needed");
  }
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    if (buffers[p].shape != LocalBox(mesh, step.from, global_shape, p).extent) {
      return absl::InvalidArgumentError(
          absl::StrCat("position ", p, " holds a buffer of shape [",
                       absl::StrJoin(buffers[p].shape, ","),
                       "] that does not match ", step.from.ToString()));
    }
  }
  std::vector<LocalTensor<T>> next(buffers.size());
  for (int64_t p = 0; p < mesh.world_size(); ++p) {
    if (mesh.IndexInGroup(p, step.group) != 0) continue;
    std::vector<int64_t> members = mesh.GroupPositions(p, step.group);
    std::vector<LocalTensor<T>> outs =
        GroupRun<T>(mesh, global_shape, step, buffers, members).Run();
    for (size_t j = 0; j < members.size(); ++j) {
      next[members[j]] = std::move(outs[j]);
    }
  }
  buffers = std::move(next);
  return absl::OkStatus();
}

template absl::Status RunStep<int64_t>(const Mesh&, absl::Span<const int64_t>,
                                       const Step&,
                                       std::vector<LocalTensor<int64_t>>&);
template absl::Status RunStep<double>(const Mesh&, absl::Span<const int64_t>,
                                      const Step&,
                                      std::vector<LocalTensor<double>>&);

}  // namespace reshard
