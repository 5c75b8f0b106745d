// MeshRegistry: registration is idempotent and keyed by content, a full
// registry refuses new meshes (RESOURCE_EXHAUSTED) without touching stored
// ones but still accepts known ones, deletion frees room, and concurrent
// use is safe.
#include "server/mesh_registry.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/convert.h"

namespace reshard::server {
namespace {

Mesh MeshOf(int64_t size) { return Mesh::Create({.shape = {size}}).value(); }

TEST(MeshRegistryTest, RegisteringIsIdempotent) {
  MeshRegistry registry(4);
  absl::StatusOr<MeshRegistry::Registered> first = registry.Register(MeshOf(2));
  absl::StatusOr<MeshRegistry::Registered> again = registry.Register(MeshOf(2));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(first->created);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(first->id, again->id);
  EXPECT_EQ(first->id, proto::MeshId(MeshOf(2)));
  EXPECT_EQ(registry.size(), 1u);
  ASSERT_NE(registry.Get(first->id), nullptr);
  EXPECT_TRUE(*registry.Get(first->id) == MeshOf(2));
  EXPECT_EQ(registry.Get("mesh-unknown"), nullptr);
}

TEST(MeshRegistryTest, AFullRegistryRefusesNewMeshesOnly) {
  MeshRegistry registry(2);
  const std::string a = registry.Register(MeshOf(2))->id;
  const std::string b = registry.Register(MeshOf(3))->id;
  absl::StatusOr<MeshRegistry::Registered> full = registry.Register(MeshOf(4));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(registry.size(), 2u);
  ASSERT_NE(registry.Get(a), nullptr);
  ASSERT_NE(registry.Get(b), nullptr);
  // A known mesh is still accepted.
  absl::StatusOr<MeshRegistry::Registered> known = registry.Register(MeshOf(3));
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_FALSE(known->created);
  // Deleting frees room.
  EXPECT_EQ(registry.Delete(a), MeshRegistry::Deleted::kYes);
  EXPECT_EQ(registry.Delete(a), MeshRegistry::Deleted::kUnknown);
  EXPECT_EQ(registry.Get(a), nullptr);
  EXPECT_TRUE(registry.Register(MeshOf(4)).ok());
  EXPECT_EQ(registry.size(), 2u);
}

// One owner (credential) fills only its own share; another still
// registers. A mesh keeps its first owner, and only that owner (or an
// admin's delete, with no owner given) deletes it, which frees the share.
TEST(MeshRegistryTest, EachOwnerHasItsShareAndDeletesOnlyItsMeshes) {
  MeshRegistry registry(10, 2);
  const std::string a = registry.Register(MeshOf(2), "token-a")->id;
  ASSERT_TRUE(registry.Register(MeshOf(3), "token-a").ok());
  absl::StatusOr<MeshRegistry::Registered> third =
      registry.Register(MeshOf(4), "token-a");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(third.status().message(),
            "mesh: this credential already registered its maximum of 2 "
            "meshes (--max_meshes_per_credential); delete some with "
            "DeleteMesh or plan with an inline mesh");
  ASSERT_TRUE(registry.Register(MeshOf(4), "token-b").ok());
  ASSERT_TRUE(registry.Register(MeshOf(5), "").ok());
  // Registering a known mesh again is no new mesh, for any owner.
  EXPECT_FALSE(registry.Register(MeshOf(2), "token-b")->created);

  const std::string b = "token-b";
  const std::string anonymous;
  EXPECT_EQ(registry.Delete(a, &b), MeshRegistry::Deleted::kNotOwner);
  EXPECT_EQ(registry.Delete(a, &anonymous), MeshRegistry::Deleted::kNotOwner);
  ASSERT_NE(registry.Get(a), nullptr);
  const std::string owner = "token-a";
  EXPECT_EQ(registry.Delete(a, &owner), MeshRegistry::Deleted::kYes);
  EXPECT_TRUE(registry.Register(MeshOf(6), "token-a").ok());  // room again
  EXPECT_EQ(registry.Delete(registry.Register(MeshOf(4), "")->id),
            MeshRegistry::Deleted::kYes);  // an admin's delete
  EXPECT_TRUE(registry.Register(MeshOf(7), "token-b").ok());
}

// The registry's room is shared fairly (common/fair_shares.h): once a
// credential waits for room, one at its fair share creates no mesh, so a
// deleted mesh's room goes to the one waiting; registering a known mesh
// takes no room.
TEST(MeshRegistryTest, RoomADeleteLeavesGoesToTheCredentialThatWaits) {
  absl::Time now = absl::FromUnixSeconds(1000);
  MeshRegistry registry(4, 4, [&now] { return now; });
  std::vector<std::string> a;
  for (int64_t size : {2, 3, 4, 5}) {
    a.push_back(registry.Register(MeshOf(size), "token-a")->id);
  }
  absl::StatusOr<MeshRegistry::Registered> full =
      registry.Register(MeshOf(6), "token-b");
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.status().message(),
            "mesh: the registry is full (4 meshes, --max_meshes); delete "
            "meshes with DeleteMesh or plan with an inline mesh, and what is "
            "deleted goes to the credentials below their fair share first");
  const std::string owner = "token-a";
  ASSERT_EQ(registry.Delete(a[3], &owner), MeshRegistry::Deleted::kYes);
  ASSERT_EQ(registry.Delete(a[2], &owner), MeshRegistry::Deleted::kYes);
  absl::StatusOr<MeshRegistry::Registered> grow =
      registry.Register(MeshOf(7), "token-a");
  EXPECT_EQ(grow.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(grow.status().message(),
            "mesh: this credential holds 2 of the 4 meshes this server "
            "allows, its fair share while another credential waits "
            "(--max_meshes divided among the credentials using it); try again "
            "once it holds fewer; delete some with DeleteMesh or plan with an "
            "inline mesh");
  EXPECT_FALSE(registry.Register(MeshOf(3), "token-b")->created)
      << "a known mesh takes no room";
  EXPECT_TRUE(registry.Register(MeshOf(6), "token-b").ok());
  EXPECT_TRUE(registry.Register(MeshOf(7), "token-b").ok());
  EXPECT_EQ(registry.size(), 4u);
  ASSERT_EQ(registry.Delete(a[1], &owner), MeshRegistry::Deleted::kYes);
  EXPECT_TRUE(registry.Register(MeshOf(8), "token-a").ok())
      << "b holds its fair share and waits no more";
}

TEST(MeshRegistryTest, ListIsOrderedById) {
  MeshRegistry registry(8);
  for (int64_t size : {5, 2, 7, 3})
    ASSERT_TRUE(registry.Register(MeshOf(size)).ok());
  const auto list = registry.List();
  ASSERT_EQ(list.size(), 4u);
  for (size_t i = 1; i < list.size(); ++i)
    EXPECT_LT(list[i - 1].first, list[i].first);
  for (const auto& [id, mesh] : list) EXPECT_EQ(proto::MeshId(*mesh), id);
}

TEST(MeshRegistryTest, ConcurrentUseStaysWithinBounds) {
  MeshRegistry registry(5);
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const int64_t size = 1 + (t * 50 + i) % 10;
        absl::StatusOr<MeshRegistry::Registered> r =
            registry.Register(MeshOf(size));
        if (!r.ok()) ++refused;
        if (i % 7 == 0 && r.ok()) registry.Delete(r->id);
        EXPECT_LE(registry.size(), 5u);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(registry.size(), 5u);
  EXPECT_GT(refused.load(), 0);
}

}  // namespace
}  // namespace reshard::server
