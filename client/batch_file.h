// A batch file (`reshardctl plan --batch FILE`, `exec --batch FILE`): one
// JSON object per line, {"name", "shape", "dtype", "from", "to"}, the
// tensors of one batch in order (docs/DESIGN.md §8). Reading the file is
// separate from planning its items, so that a line that is not such an object
// stops the command while an item that does not fit the mesh is that
// item's own error, as PlanBatch answers it.
#ifndef RESHARD_CLIENT_BATCH_FILE_H_
#define RESHARD_CLIENT_BATCH_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/core/mesh.h"
#include "planner/search/planner.h"

namespace reshard::client {

struct BatchFileItem {
  std::string name;  // "items[i]" when the line has none
  std::vector<int64_t> shape;
  std::string dtype;  // "float32" when the line has none
  std::string from;
  std::string to;
  size_t line = 0;  // in the file, from 1
  // A cross-mesh batch's item from its own source mesh (`plan --src_mesh
  // ... --batch`): "src_mesh" as --src_mesh takes it, "src_ranks" (its
  // rank map) and "src_flatten" (its flattened groups, "A,B" each).
  std::string src_mesh;  // empty: the batch's
  std::vector<int64_t> src_ranks;
  std::vector<std::string> src_flatten;
};

// Parses the text of a batch file; blank lines are skipped. INVALID_ARGUMENT
// "line N: ..." for a line that is not a JSON object with an integer array
// `shape` and string `from` and `to` (`name` and `dtype`, when present,
// strings), or with other keys; for a file without items.
// `source_meshes` admits the cross-mesh keys src_mesh, src_ranks and
// src_flatten.
absl::StatusOr<std::vector<BatchFileItem>> ParseBatchFile(
    absl::string_view text, bool source_meshes = false);

// Reads and parses `path`: NOT_FOUND "--batch: cannot read ..." when it
// cannot be read; ParseBatchFile's errors prefixed with "--batch PATH ".
absl::StatusOr<std::vector<BatchFileItem>> ReadBatchFile(
    const std::string& path, bool source_meshes = false);

// Each item's planning request on `mesh` under `options`, or its own error
// naming the field (`src[0]: ...`; PlanBatch answers it as `items[i].src[0]:
// ...`).
std::vector<absl::StatusOr<PlanRequest>> BatchRequests(
    const Mesh& mesh, const std::vector<BatchFileItem>& items,
    const PlanOptions& options);

// The items' names, in order.
std::vector<std::string> BatchNames(const std::vector<BatchFileItem>& items);

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_BATCH_FILE_H_
