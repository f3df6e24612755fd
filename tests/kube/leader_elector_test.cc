// LeaderElector against the in-memory API server's Leases, on fake clocks:
// who may take a lease when, that a leader stops counting itself leader
// before anyone else may take over, and that writes race safely.
#include "deviceshare/kube/leader_elector.h"

#include <memory>
#include <string>
#include <vector>

#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/api_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"

namespace deviceshare::testing {
namespace {

using ::deviceshare::kube::ApiClient;
using ::deviceshare::kube::LeaderElectionOptions;
using ::deviceshare::kube::LeaderElector;
using ::testing::HasSubstr;

LeaderElectionOptions Options(const std::string& identity) {
  LeaderElectionOptions options;
  options.lease_namespace = "kube-system";
  options.name = "deviceshare-scheduler";
  options.identity = identity;
  options.lease_duration = absl::Seconds(15);
  options.renew_deadline = absl::Seconds(10);
  options.retry_period = absl::Seconds(2);
  return options;
}

// One candidate: its own clock (machines' clocks need not agree) and its
// own client.
struct Candidate {
  Candidate(FakeApiServer& api, const std::string& identity,
            absl::Time start = absl::FromUnixSeconds(1700000000))
      : clock(start) {
    client = *ApiClient::Create(api.kube_config());
    elector = *LeaderElector::Create(
        client.get(), &clock, Options(identity),
        [this](bool leading) { changes.push_back(leading); });
  }
  FakeClock clock;
  std::unique_ptr<ApiClient> client;
  std::unique_ptr<LeaderElector> elector;
  std::vector<bool> changes;
};

TEST(LeaderElectorTest, FirstCandidateCreatesTheLeaseAndLeads) {
  FakeApiServer api;
  Candidate a(api, "a");
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_TRUE(a.elector->TryAcquireOrRenew());
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_EQ(a.elector->acquisitions(), 1);
  EXPECT_THAT(a.changes, ::testing::ElementsAre(true));
  std::optional<nlohmann::json> lease =
      api.GetLease("kube-system", "deviceshare-scheduler");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "a");
  EXPECT_EQ((*lease)["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ((*lease)["spec"]["renewTime"], "2023-11-14T22:13:20.000000Z");
}

TEST(LeaderElectorTest, OthersWaitTheLeaseDurationFromWhenTheySawItLast) {
  FakeApiServer api;
  Candidate a(api, "a");
  // b's clock is an hour ahead: only durations on b's own clock count.
  Candidate b(api, "b", absl::FromUnixSeconds(1700000000) + absl::Hours(1));
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  EXPECT_FALSE(b.elector->TryAcquireOrRenew());
  EXPECT_EQ(b.elector->observed_holder(), "a");
  // a renews every 2 s: the record changes, b's wait starts again.
  for (int i = 0; i < 10; ++i) {
    a.clock.Advance(absl::Seconds(2));
    b.clock.Advance(absl::Seconds(2));
    ASSERT_TRUE(a.elector->TryAcquireOrRenew());
    EXPECT_FALSE(b.elector->TryAcquireOrRenew());
  }
  // a stops renewing (stalled). b sees the same record for 15 s, then takes
  // the lease; by then a has long stopped counting itself leader.
  b.clock.Advance(absl::Seconds(14));
  a.clock.Advance(absl::Seconds(14));
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_FALSE(b.elector->TryAcquireOrRenew());
  b.clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(b.elector->TryAcquireOrRenew());
  EXPECT_TRUE(b.elector->IsLeader());
  EXPECT_EQ(api.GetLease("kube-system", "deviceshare-scheduler")
                .value()["spec"]["leaseTransitions"],
            1);
  // a comes back: it reads b's record and steps down for good.
  EXPECT_FALSE(a.elector->TryAcquireOrRenew());
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_THAT(a.changes, ::testing::ElementsAre(true, false));
}

TEST(LeaderElectorTest, LeaderStopsBeforeTheRenewDeadlineWhenItCannotRenew) {
  FakeApiServer api;
  Candidate a(api, "a");
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  api.FailNextLeaseWrites(100, 500);
  for (int i = 1; i <= 4; ++i) {
    a.clock.Advance(absl::Seconds(2));
    a.elector->TryAcquireOrRenew();
    EXPECT_TRUE(a.elector->IsLeader()) << "after " << 2 * i << " s";
  }
  EXPECT_EQ(kube::HttpStatusOf(a.elector->last_error()), 500);
  a.clock.Advance(absl::Seconds(2));  // 10 s after the last renewal started
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_FALSE(a.elector->TryAcquireOrRenew());
  EXPECT_THAT(a.changes, ::testing::ElementsAre(true, false));
  // The API server answers again and nobody took the lease: a leads again.
  api.FailNextLeaseWrites(0, 500);
  a.clock.Advance(absl::Seconds(2));
  EXPECT_TRUE(a.elector->TryAcquireOrRenew());
  EXPECT_EQ(a.elector->acquisitions(), 1);  // renewed, not taken over
}

TEST(LeaderElectorTest, ReleaseHandsTheLeaseOverAtOnce) {
  FakeApiServer api;
  Candidate a(api, "a");
  Candidate b(api, "b");
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  EXPECT_FALSE(b.elector->TryAcquireOrRenew());
  a.elector->Release();
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_EQ(api.GetLease("kube-system", "deviceshare-scheduler")
                .value()["spec"]["holderIdentity"],
            "");
  EXPECT_TRUE(b.elector->TryAcquireOrRenew());
}

TEST(LeaderElectorTest, AfterATakeoverTheOthersWaitForTheNewHolder) {
  FakeApiServer api;
  Candidate a(api, "a");
  Candidate b(api, "b");
  Candidate c(api, "c");
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  ASSERT_FALSE(b.elector->TryAcquireOrRenew());
  ASSERT_FALSE(c.elector->TryAcquireOrRenew());
  b.clock.Advance(absl::Seconds(16));
  c.clock.Advance(absl::Seconds(16));
  // Both saw a's lease expire; b writes first, and c then reads b's fresh
  // record, which has not expired for c.
  EXPECT_TRUE(b.elector->TryAcquireOrRenew());
  EXPECT_FALSE(c.elector->TryAcquireOrRenew());
  EXPECT_EQ(c.elector->observed_holder(), "b");
}

// What keeps two candidates that read the same expired record from both
// winning: the update names the resourceVersion read, and the second
// writer's is stale.
TEST(LeaderElectorTest, TheLeaseUpdateIsConditional) {
  FakeApiServer api;
  Candidate a(api, "a");
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  const std::string path =
      kube::LeasePath("kube-system", "deviceshare-scheduler");
  absl::StatusOr<nlohmann::json> read_by_b = a.client->Get(path);
  absl::StatusOr<nlohmann::json> read_by_c = a.client->Get(path);
  ASSERT_OK(read_by_b.status());
  (*read_by_b)["spec"]["holderIdentity"] = "b";
  (*read_by_c)["spec"]["holderIdentity"] = "c";
  ASSERT_OK(a.client->Put(path, *read_by_b).status());
  absl::StatusOr<nlohmann::json> second = a.client->Put(path, *read_by_c);
  EXPECT_EQ(kube::HttpStatusOf(second.status()), 409);
  // a's next round reads b's record and steps down.
  EXPECT_FALSE(a.elector->TryAcquireOrRenew());
  EXPECT_FALSE(a.elector->IsLeader());
}

TEST(LeaderElectorTest, AStaleWriteIsAConflictAndNotLeadership) {
  FakeApiServer api;
  Candidate a(api, "a");
  ASSERT_TRUE(a.elector->TryAcquireOrRenew());
  api.FailNextLeaseWrites(1, 409);
  a.clock.Advance(absl::Seconds(2));
  EXPECT_FALSE(a.elector->TryAcquireOrRenew());
  EXPECT_FALSE(a.elector->IsLeader());
}

TEST(LeaderElectorTest, OptionsAreChecked) {
  FakeApiServer api;
  std::unique_ptr<ApiClient> client = *ApiClient::Create(api.kube_config());
  FakeClock clock;
  LeaderElectionOptions options = Options("a");
  options.renew_deadline = absl::Seconds(20);
  EXPECT_THAT(LeaderElector::Create(client.get(), &clock, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--leader-elect-renew-deadline (20s)")));
  options = Options("");
  EXPECT_THAT(LeaderElector::Create(client.get(), &clock, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--leader-elect-identity")));
}

}  // namespace
}  // namespace deviceshare::testing
