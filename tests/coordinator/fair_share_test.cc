// The fair-share rule of coordinator/credential_slots.h, on a clock moved
// by hand: one credential alone may use every slot its cap allows; once
// another waits, the first takes no slot at or past its fair share, so the
// slots it gives back go to the one waiting; a wait ends with its window.
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/credential_slots.h"
#include "gtest/gtest.h"

namespace reshard::coordinator {
namespace {

using Why = CredentialSlots::Refusal::Why;

class FairShareTest : public ::testing::Test {
 protected:
  std::optional<CredentialSlots::Slot> Take(const std::string& credential) {
    return slots_.TryAcquire(credential, /*max=*/4, &refusal_);
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  CredentialSlots slots_{4, [this] { return now_; }};
  CredentialSlots::Refusal refusal_;
};

TEST_F(FairShareTest, ASlotGivenBackGoesToTheCredentialThatWaits) {
  std::vector<CredentialSlots::Slot> a;
  for (int i = 0; i < 4; ++i) {
    std::optional<CredentialSlots::Slot> slot = Take("a");
    ASSERT_TRUE(slot.has_value()) << "alone, a may use every slot";
    a.push_back(*std::move(slot));
  }
  EXPECT_FALSE(Take("b").has_value());
  EXPECT_EQ(refusal_.why, Why::kTotal);  // b now waits
  a.pop_back();                          // a gives one back: 3 of 4 held
  EXPECT_FALSE(Take("a").has_value());
  EXPECT_EQ(refusal_.why, Why::kFairShare);
  EXPECT_EQ(refusal_.held, 3);
  EXPECT_EQ(refusal_.fair_share, 2);
  std::optional<CredentialSlots::Slot> b1 = Take("b");
  ASSERT_TRUE(b1.has_value()) << "the slot a gave back is b's";
  // b holds 1 of its fair 2 and still waits: a's next slot is b's too.
  a.pop_back();
  EXPECT_FALSE(Take("a").has_value());
  EXPECT_EQ(refusal_.why, Why::kFairShare);
  std::optional<CredentialSlots::Slot> b2 = Take("b");
  ASSERT_TRUE(b2.has_value());
  EXPECT_EQ(slots_.total(), 4);
  // b has its fair share and waits no more; a slot b gives back is
  // anyone's again.
  b2.reset();
  std::optional<CredentialSlots::Slot> a3 = Take("a");
  EXPECT_TRUE(a3.has_value());
}

TEST_F(FairShareTest, AWaitEndsWithItsWindowAndTheCapStillHolds) {
  std::vector<CredentialSlots::Slot> a;
  for (int i = 0; i < 4; ++i) a.push_back(*Take("a"));
  EXPECT_FALSE(Take("b").has_value());
  a.pop_back();
  EXPECT_FALSE(Take("a").has_value());  // b waits
  now_ += CredentialSlots::kWaitingWindow + absl::Seconds(1);
  std::optional<CredentialSlots::Slot> again = Take("a");
  EXPECT_TRUE(again.has_value()) << "b stopped trying: a may grow again";
  EXPECT_FALSE(slots_.TryAcquire("a", /*max=*/4, &refusal_).has_value());
  EXPECT_EQ(refusal_.why, Why::kCredential);  // its own cap of 4
  EXPECT_EQ(refusal_.held, 4);
}

TEST_F(FairShareTest, ThreeCredentialsShareByThirds) {
  CredentialSlots slots(6, [this] { return now_; });
  CredentialSlots::Refusal refusal;
  std::vector<CredentialSlots::Slot> a;
  for (int i = 0; i < 6; ++i) a.push_back(*slots.TryAcquire("a", 6));
  EXPECT_FALSE(slots.TryAcquire("b", 6).has_value());
  EXPECT_FALSE(slots.TryAcquire("c", 6).has_value());
  for (int i = 0; i < 4; ++i) a.pop_back();  // a keeps 2, its third
  EXPECT_FALSE(slots.TryAcquire("a", 6, &refusal).has_value());
  EXPECT_EQ(refusal.fair_share, 2);
  std::vector<CredentialSlots::Slot> bc;
  for (const char* who : {"b", "c", "b", "c"}) {
    std::optional<CredentialSlots::Slot> slot = slots.TryAcquire(who, 6);
    ASSERT_TRUE(slot.has_value()) << who;
    bc.push_back(*std::move(slot));
  }
  EXPECT_EQ(slots.total(), 6);
}

}  // namespace
}  // namespace reshard::coordinator
