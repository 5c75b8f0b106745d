#include "server/pages.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/job_convert.h"
#include "server/message_bounds.h"

namespace reshard::server {
namespace {

// Entries are fetched this many at a time while a page fills.
constexpr size_t kFetchChunk = 16;
// An entry's framing in its reply: a tag and a length.
constexpr int64_t kEntryFramingBytes = 6;
// The most bytes a JobInfo takes without its agents (its recent runs'
// errors are cut at 512 bytes), and one agent at most.
constexpr int64_t kJobWithoutAgentsBytes = 16 << 10;
constexpr coordinator::CoordinatorLimits kCore;
constexpr int64_t kAgentBytes =
    kCore.max_host_bytes + kCore.max_version_bytes + 32;

absl::StatusOr<size_t> PageSizeOf(int32_t page_size) {
  if (page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: ", page_size, " is negative"));
  }
  return page_size == 0 ? std::numeric_limits<size_t>::max()
                        : static_cast<size_t>(page_size);
}

int64_t PageBudget(int64_t max_message_bytes) {
  return max_message_bytes - kPageSlackBytes;
}

// How many agents a page's JobInfo holds at most.
absl::StatusOr<int64_t> AgentsFit(int64_t max_message_bytes) {
  const int64_t fit =
      (PageBudget(max_message_bytes) - kJobWithoutAgentsBytes) / kAgentBytes;
  if (fit < 1) {
    return absl::ResourceExhaustedError(
        absl::StrCat("this server's --max_message_bytes ", max_message_bytes,
                     " leaves no room for a job's agents"));
  }
  return fit;
}

// A listing ordered by key, as pages: `fetch(from, n)` gives at most n
// entries from key `from` on, `key(entry)` an entry's key, and `add` puts
// one in the reply. A page that cannot hold even its first entry is
// RESOURCE_EXHAUSTED naming it.
template <typename Entry>
absl::Status FillPage(
    size_t page_size, int64_t budget, const std::string& token,
    const std::function<std::vector<Entry>(const std::string&, size_t)>& fetch,
    const std::function<std::string(const Entry&)>& key,
    const std::function<void(Entry)>& add, std::string* next_token) {
  std::string from = token;
  size_t added = 0;
  int64_t used = 0;
  while (true) {
    std::vector<Entry> chunk = fetch(from, kFetchChunk + 1);
    const size_t count = std::min(chunk.size(), kFetchChunk);
    for (size_t i = 0; i < count; ++i) {
      const int64_t bytes =
          static_cast<int64_t>(chunk[i].ByteSizeLong()) + kEntryFramingBytes;
      if (added == page_size || (added > 0 && used + bytes > budget)) {
        *next_token = key(chunk[i]);
        return absl::OkStatus();
      }
      if (used + bytes > budget) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "\"", key(chunk[i]), "\" alone takes ", bytes,
            " bytes, more than this server's --max_message_bytes leaves a "
            "page (",
            budget, ")"));
      }
      used += bytes;
      add(std::move(chunk[i]));
      ++added;
    }
    if (chunk.size() <= kFetchChunk) {
      next_token->clear();
      return absl::OkStatus();
    }
    from = key(chunk[kFetchChunk]);
  }
}

}  // namespace

absl::Status FillJobsPage(const coordinator::Coordinator& core,
                          const coordinator::Caller& caller,
                          const v1::ListJobsRequest& request,
                          int64_t max_message_bytes,
                          v1::ListJobsResponse* response) {
  absl::StatusOr<size_t> page_size = PageSizeOf(request.page_size());
  if (!page_size.ok()) return page_size.status();
  // A job with more agents than a page holds lists those that fit; its
  // agents_joined says how many there are, and GetJob pages through them.
  absl::StatusOr<int64_t> fit = AgentsFit(max_message_bytes);
  if (!fit.ok()) return fit.status();
  return FillPage<v1::JobInfo>(
      *page_size, PageBudget(max_message_bytes), request.page_token(),
      [&](const std::string& from, size_t n) {
        std::vector<v1::JobInfo> jobs;
        for (const coordinator::JobSnapshot& job :
             core.ListJobs(caller, from, n, coordinator::AgentPage{0, *fit})) {
          proto::JobSnapshotToProto(job, &jobs.emplace_back());
        }
        return jobs;
      },
      [](const v1::JobInfo& job) { return job.name(); },
      [&](v1::JobInfo job) { response->add_jobs()->Swap(&job); },
      response->mutable_next_page_token());
}

absl::Status FillJobPage(const coordinator::Coordinator& core,
                         const coordinator::Caller& caller,
                         const v1::GetJobRequest& request,
                         int64_t max_message_bytes,
                         v1::GetJobResponse* response) {
  absl::StatusOr<size_t> page_size = PageSizeOf(request.page_size());
  if (!page_size.ok()) return page_size.status();
  coordinator::AgentPage page;
  if (!request.page_token().empty() &&
      !(absl::SimpleAtoi(request.page_token(), &page.first_rank) &&
        page.first_rank >= 0)) {
    return absl::InvalidArgumentError(
        "page_token: not a token a GetJob reply gave");
  }
  absl::StatusOr<int64_t> fit = AgentsFit(max_message_bytes);
  if (!fit.ok()) return fit.status();
  page.max_agents = static_cast<int64_t>(
      std::min<size_t>(*page_size, static_cast<size_t>(*fit)));
  absl::StatusOr<coordinator::JobSnapshot> job =
      core.GetJob(request.job(), caller, page);
  if (!job.ok()) return job.status();
  proto::JobSnapshotToProto(*job, response->mutable_job());
  if (job->next_rank >= 0) {
    response->set_next_page_token(absl::StrCat(job->next_rank));
  }
  return absl::OkStatus();
}

absl::Status FillMeshesPage(const MeshRegistry& registry,
                            const std::string* viewer,
                            const v1::ListMeshesRequest& request,
                            int64_t max_message_bytes,
                            v1::ListMeshesResponse* response) {
  absl::StatusOr<size_t> page_size = PageSizeOf(request.page_size());
  if (!page_size.ok()) return page_size.status();
  return FillPage<v1::GetMeshResponse>(
      *page_size, PageBudget(max_message_bytes), request.page_token(),
      [&](const std::string& from, size_t n) {
        std::vector<v1::GetMeshResponse> meshes;
        for (const auto& [id, mesh] : registry.List(viewer, from, n)) {
          v1::GetMeshResponse& entry = meshes.emplace_back();
          entry.set_mesh_id(id);
          *entry.mutable_mesh() = proto::MeshToProto(*mesh);
        }
        return meshes;
      },
      [](const v1::GetMeshResponse& mesh) { return mesh.mesh_id(); },
      [&](v1::GetMeshResponse mesh) { response->add_meshes()->Swap(&mesh); },
      response->mutable_next_page_token());
}

}  // namespace reshard::server
