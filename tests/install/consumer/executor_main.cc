// A framework's use of the installed executor API: four ranks as threads
// meet in the framework's own key-value store, each compiles an all-gather
// plan once and runs it on its own buffers; prints "validated" when every
// rank holds the whole tensor.
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor/backends/gloo/gloo_communicator.h"
#include "executor/run/plan_runner.h"
#include "executor/stores/key_value_store.h"
#include "planner/search/planner.h"

namespace {

// The KeyValueStore interface is all a backend needs to rendezvous.
class ThreadStore : public reshard::executor::KeyValueStore {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
    changed_.notify_all();
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> Get(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    const bool all = changed_.wait_for(lock, timeout, [&] {
      for (const std::string& key : keys) {
        if (!values_.count(key)) return false;
      }
      return true;
    });
    if (!all) return absl::DeadlineExceededError("keys not set in time");
    std::vector<std::string> out;
    for (const std::string& key : keys) out.push_back(values_[key]);
    return out;
  }
  absl::Status DeleteByPrefix(const std::string& prefix) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = values_.lower_bound(prefix);
         it != values_.end() && it->first.rfind(prefix, 0) == 0;) {
      it = values_.erase(it);
    }
    return absl::OkStatus();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

}  // namespace

int main() {
  using namespace reshard;
  // An 8x6 tensor whose element i holds i, row-sharded over A and
  // replicated over B, gathered onto every rank.
  const Mesh mesh = *Mesh::Create(MeshSpec{{2, 2}, {"A", "B"}, {}, {}, {}});
  const Plan plan = *MakePlan(
      mesh, *ParsePlanRequest(mesh, {8, 6}, "f32", "S(0),R", "R,R", {}));
  auto store = std::make_shared<ThreadStore>();
  std::vector<int> ok(4, 0);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.emplace_back([&, rank] {
      executor::GlooCommunicatorProvider comms(store, "consumer", rank, {});
      auto runner = executor::PlanRunner::Compile(mesh, plan, rank, comms);
      if (!runner.ok()) return;
      std::vector<float> in((*runner)->SourceNumel());
      std::vector<float> out((*runner)->ResultNumel());
      const int first = (rank / 2) * static_cast<int>(in.size());
      for (size_t i = 0; i < in.size(); ++i) in[i] = first + i;
      for (int i = 0; i < 3; ++i) {
        if (!(*runner)->Run(in.data(), out.data()).ok()) return;
      }
      bool right = out.size() == 48;
      for (size_t i = 0; i < out.size(); ++i) right = right && out[i] == i;
      ok[rank] = right;
    });
  }
  for (auto& t : ranks) t.join();
  const bool all = ok == std::vector<int>(4, 1);
  std::cout << (all ? "validated" : "wrong") << "\n";
  return all ? 0 : 1;
}
