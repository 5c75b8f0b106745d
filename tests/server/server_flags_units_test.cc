// The pure parts of reshard-planner's start-up (server/server_flags.h):
// which --listen addresses reach this host only, which decides whether
// jobs without a token are served by default.
#include <string>

#include "gtest/gtest.h"
#include "server/server_flags.h"

namespace reshard::server {
namespace {

TEST(ServerFlagsUnitsTest, OnlyLoopbackAddressesAreLoopbackOnly) {
  for (const std::string loopback :
       {"127.0.0.1:50051", "127.0.0.1:0", "127.5.6.7:9", "[::1]:50051",
        "localhost:1"}) {
    EXPECT_TRUE(ListensOnLoopbackOnly(loopback)) << loopback;
  }
  for (const std::string beyond :
       {"0.0.0.0:50051", "10.0.0.1:2", "[::]:1", "127.evil.example:1",
        "planner:50051", "128.0.0.1:1", ":50051"}) {
    EXPECT_FALSE(ListensOnLoopbackOnly(beyond)) << beyond;
  }
}

}  // namespace
}  // namespace reshard::server
