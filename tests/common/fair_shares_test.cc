// The fair-share rule of common/fair_shares.h, on a clock moved by hand:
// one credential alone may use everything its cap allows; once another
// waits, the first takes nothing past its fair share, so what it gives
// back goes to the one waiting; a wait ends with its window.
#include "common/fair_shares.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using Why = FairShares::Refusal::Why;

class FairShareTest : public ::testing::Test {
 protected:
  std::optional<FairShares::Hold> Take(const std::string& credential) {
    return slots_.TryHold(credential, 1, /*max=*/4, &refusal_);
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  FairShares slots_{4, [this] { return now_; }};
  FairShares::Refusal refusal_;
};

TEST_F(FairShareTest, ASlotGivenBackGoesToTheCredentialThatWaits) {
  std::vector<FairShares::Hold> a;
  for (int i = 0; i < 4; ++i) {
    std::optional<FairShares::Hold> slot = Take("a");
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
  std::optional<FairShares::Hold> b1 = Take("b");
  ASSERT_TRUE(b1.has_value()) << "the slot a gave back is b's";
  // b holds 1 of its fair 2 and still waits: a's next slot is b's too.
  a.pop_back();
  EXPECT_FALSE(Take("a").has_value());
  EXPECT_EQ(refusal_.why, Why::kFairShare);
  std::optional<FairShares::Hold> b2 = Take("b");
  ASSERT_TRUE(b2.has_value());
  EXPECT_EQ(slots_.total(), 4);
  // b has its fair share and waits no more; a slot b gives back is
  // anyone's again.
  b2.reset();
  std::optional<FairShares::Hold> a3 = Take("a");
  EXPECT_TRUE(a3.has_value());
}

TEST_F(FairShareTest, AWaitEndsWithItsWindowAndTheCapStillHolds) {
  std::vector<FairShares::Hold> a;
  for (int i = 0; i < 4; ++i) a.push_back(*Take("a"));
  EXPECT_FALSE(Take("b").has_value());
  a.pop_back();
  EXPECT_FALSE(Take("a").has_value());  // b waits
  now_ += FairShares::kWaitingWindow + absl::Seconds(1);
  std::optional<FairShares::Hold> again = Take("a");
  EXPECT_TRUE(again.has_value()) << "b stopped trying: a may grow again";
  EXPECT_FALSE(slots_.TryHold("a", 1, /*max=*/4, &refusal_).has_value());
  EXPECT_EQ(refusal_.why, Why::kCredential);  // its own cap of 4
  EXPECT_EQ(refusal_.held, 4);
}

TEST_F(FairShareTest, ThreeCredentialsShareByThirds) {
  FairShares slots(6, [this] { return now_; });
  FairShares::Refusal refusal;
  std::vector<FairShares::Hold> a;
  for (int i = 0; i < 6; ++i) a.push_back(*slots.TryHold("a", 1, 6));
  EXPECT_FALSE(slots.TryHold("b", 1, 6).has_value());
  EXPECT_FALSE(slots.TryHold("c", 1, 6).has_value());
  for (int i = 0; i < 4; ++i) a.pop_back();  // a keeps 2, its third
  EXPECT_FALSE(slots.TryHold("a", 1, 6, &refusal).has_value());
  EXPECT_EQ(refusal.fair_share, 2);
  std::vector<FairShares::Hold> bc;
  for (const char* who : {"b", "c", "b", "c"}) {
    std::optional<FairShares::Hold> slot = slots.TryHold(who, 1, 6);
    ASSERT_TRUE(slot.has_value()) << who;
    bc.push_back(*std::move(slot));
  }
  EXPECT_EQ(slots.total(), 6);
}

// Amounts (store bytes): a take that would pass the fair share is
// refused whole, and the waiter's take of many units gets in.
TEST_F(FairShareTest, AmountsShareTheSameWay) {
  FairShares bytes(100, [this] { return now_; });
  FairShares::Refusal refusal;
  ASSERT_TRUE(bytes.Take("a", 90, 100));
  EXPECT_FALSE(bytes.Take("b", 20, 100, &refusal));
  EXPECT_EQ(refusal.why, Why::kTotal);  // b waits for 20
  bytes.Give("a", 40);                  // a holds 50, its fair share
  EXPECT_FALSE(bytes.Take("a", 1, 100, &refusal));
  EXPECT_EQ(refusal.why, Why::kFairShare);
  EXPECT_EQ(refusal.held, 50);
  EXPECT_EQ(refusal.fair_share, 50);
  ASSERT_TRUE(bytes.Take("b", 20, 100));
  EXPECT_TRUE(bytes.Take("b", 30, 100)) << "b may grow to its fair share";
  EXPECT_EQ(bytes.total(), 100);
  EXPECT_TRUE(bytes.Take("a", 0, 100)) << "nothing is always there";
  EXPECT_EQ(FairShareRefusalText(refusal, "job token share \"a\"",
                                 {"bytes", 100, "--per", 100, "--total"}),
            "job token share \"a\" holds 50 of the 100 bytes this server "
            "allows, its fair share while another credential waits (--total "
            "divided among the credentials using it); try again once it holds "
            "fewer");
}

// What a given-back amount leaves: a credential that gives back all it
// holds is no longer among those sharing.
TEST_F(FairShareTest, ACredentialThatHoldsNothingSharesNothing) {
  FairShares slots(4, [this] { return now_; });
  ASSERT_TRUE(slots.Take("a", 4, 4));
  EXPECT_FALSE(slots.Take("b", 1, 4));  // b waits
  slots.Give("a", 4);
  ASSERT_TRUE(slots.Take("b", 2, 4));  // b's fair share of 2: done waiting
  EXPECT_TRUE(slots.Take("a", 2, 4));
  EXPECT_FALSE(slots.Take("c", 1, 4));  // full: c waits
  slots.Give("b", 2);
  FairShares::Refusal refusal;
  EXPECT_FALSE(slots.Take("a", 1, 4, &refusal));
  EXPECT_EQ(refusal.why, Why::kFairShare);
  EXPECT_EQ(refusal.fair_share, 2) << "a and c share; b holds nothing";
  EXPECT_TRUE(slots.Take("c", 2, 4));
}

}  // namespace
}  // namespace reshard
