// Both local KeyValueStores by the interface's contract: a get returns the
// values in the order asked, waits for keys set later (by another thread),
// ends at its timeout with DEADLINE_EXCEEDED naming the missing keys, and
// a delete removes exactly the keys under its prefix.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/stores/file_store.h"
#include "executor/stores/memory_store.h"
#include "executor/stores/rendezvous_dir.h"
#include "gtest/gtest.h"

namespace reshard::executor {
namespace {

using std::chrono::milliseconds;

struct StoreCase {
  const char* name;
  std::function<std::shared_ptr<KeyValueStore>(const std::string& dir)> make;
};

void PrintTo(const StoreCase& c, std::ostream* os) { *os << c.name; }

class KeyValueStoreTest : public ::testing::TestWithParam<StoreCase> {
 protected:
  void SetUp() override {
    dir_ = *RendezvousDir::Create("reshard-kv");
    store_ = GetParam().make(dir_->path());
  }
  std::unique_ptr<RendezvousDir> dir_;
  std::shared_ptr<KeyValueStore> store_;
};

TEST_P(KeyValueStoreTest, AGetReturnsTheValuesInTheOrderAsked) {
  ASSERT_TRUE(store_->Set("run/a", std::string("x\0y", 3)).ok());
  ASSERT_TRUE(store_->Set("run/b", "").ok());
  ASSERT_TRUE(store_->Set("run/a", "z").ok());  // overwrites
  absl::StatusOr<std::vector<std::string>> values =
      store_->Get({"run/b", "run/a"}, milliseconds(1000));
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<std::string>{"", "z"}));
}

TEST_P(KeyValueStoreTest, AGetWaitsForAKeySetLater) {
  absl::StatusOr<std::vector<std::string>> values;
  std::thread reader([&] {
    values = store_->Get({"late", "early"}, milliseconds(10000));
  });
  ASSERT_TRUE(store_->Set("early", "1").ok());
  ASSERT_TRUE(store_->Set("late", "2").ok());
  reader.join();
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<std::string>{"2", "1"}));
}

TEST_P(KeyValueStoreTest, AGetPastItsTimeoutNamesTheMissingKeys) {
  ASSERT_TRUE(store_->Set("here", "1").ok());
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<std::string>> values =
      store_->Get({"here", "gone/0", "gone/1"}, milliseconds(100));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  ASSERT_EQ(values.status().code(), absl::StatusCode::kDeadlineExceeded)
      << values.status();
  EXPECT_NE(values.status().message().find(
                "waiting 100ms for keys [gone/0, gone/1] timed out"),
            std::string::npos)
      << values.status();
}

TEST_P(KeyValueStoreTest, ADeleteRemovesExactlyItsPrefix) {
  for (const char* key : {"run/1/a", "run/1/b", "run/10/a", "other"}) {
    ASSERT_TRUE(store_->Set(key, key).ok());
  }
  ASSERT_TRUE(store_->DeleteByPrefix("run/1/").ok());
  absl::StatusOr<std::vector<std::string>> kept =
      store_->Get({"run/10/a", "other"}, milliseconds(1000));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, (std::vector<std::string>{"run/10/a", "other"}));
  for (const char* key : {"run/1/a", "run/1/b"}) {
    EXPECT_EQ(store_->Get({key}, milliseconds(20)).status().code(),
              absl::StatusCode::kDeadlineExceeded)
        << key;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Stores, KeyValueStoreTest,
    ::testing::Values(
        StoreCase{"memory",
                  [](const std::string&) -> std::shared_ptr<KeyValueStore> {
                    return std::make_shared<MemoryStore>();
                  }},
        StoreCase{"file",
                  [](const std::string& dir) -> std::shared_ptr<KeyValueStore> {
                    return std::make_shared<FileStore>(dir);
                  }}),
    [](const ::testing::TestParamInfo<StoreCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace reshard::executor
