// Signed allocation records: what a signature covers, the verdicts of
// forged, replayed, moved, tampered and unsigned records, and rotation.
#include "deviceshare/trust/record_signature.h"

#include <map>
#include <string>

#include "absl/strings/escaping.h"
#include "deviceshare/codec/annotation_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::trust {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;
using Annotations = std::map<std::string, std::string>;

// `<id>: <base64 of 32 bytes of fill>`.
std::string KeyLine(const std::string& id, char fill) {
  return id + ": " + absl::Base64Escape(std::string(32, fill)) + "\n";
}

RecordKeys Keys(const std::string& text) {
  absl::StatusOr<RecordKeys> keys = RecordKeys::Parse(text, "keys");
  EXPECT_TRUE(keys.ok()) << keys.status();
  return *keys;
}

Annotations HamiRecord() {
  return {{keys::kHamiAllocated, "GPU-a,NVIDIA,8000,30:;"},
          {keys::kHamiToAllocate, "GPU-a,NVIDIA,8000,30:;"},
          {keys::kHamiNode, "node-1"},
          {keys::kHamiTime, "1767225600"},
          {keys::kHamiBindPhase, "allocating"}};
}

Annotations Signed(const RecordKeys& keys, Annotations annotations,
                   const std::string& uid = "uid-1",
                   const std::string& node = "node-1") {
  annotations[kRecordSignature] = SignRecord(keys, annotations, uid, node);
  return annotations;
}

RecordVerdict Verdict(const RecordKeys& keys, const Annotations& annotations,
                      const std::string& uid = "uid-1",
                      const std::string& node = "node-1") {
  return CheckRecord(keys, annotations, uid, node).verdict;
}

TEST(RecordSignatureTest, ASignedRecordIsValidAndSaysItsKey) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  const Annotations record = Signed(keys, HamiRecord());
  EXPECT_THAT(record.at(kRecordSignature), ::testing::StartsWith("v1.k1."));
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kValid);
}

TEST(RecordSignatureTest, WhatOthersWriteAfterTheDecisionIsNotSigned) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  Annotations record = Signed(keys, HamiRecord());
  record[keys::kHamiBindPhase] = "success";
  record[keys::kHamiToAllocate] = ";";  // HAMi's agent empties it
  record["unrelated"] = "x";
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kValid);
}

TEST(RecordSignatureTest, TamperedRecordsAreForged) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  Annotations more_memory = Signed(keys, HamiRecord());
  more_memory[keys::kHamiAllocated] = "GPU-a,NVIDIA,80000,100:;";
  EXPECT_EQ(Verdict(keys, more_memory), RecordVerdict::kForged);
  Annotations other_node_key = Signed(keys, HamiRecord());
  other_node_key[keys::kHamiNode] = "node-2";
  EXPECT_EQ(Verdict(keys, other_node_key), RecordVerdict::kForged);
  Annotations bad_mac = Signed(keys, HamiRecord());
  bad_mac[kRecordSignature].back() ^= 1;
  RecordCheck check = CheckRecord(keys, bad_mac, "uid-1", "node-1");
  EXPECT_EQ(check.verdict, RecordVerdict::kForged);
  EXPECT_THAT(check.reason, HasSubstr("does not match"));
}

TEST(RecordSignatureTest, ASignatureCopiedToAnotherPodOrNodeIsForged) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  const Annotations record = Signed(keys, HamiRecord(), "uid-1", "node-1");
  // Another pod with the very same annotations (a replay).
  EXPECT_EQ(Verdict(keys, record, "uid-2", "node-1"), RecordVerdict::kForged);
  // The same pod's record read on another node.
  EXPECT_EQ(Verdict(keys, record, "uid-1", "node-2"), RecordVerdict::kForged);
}

TEST(RecordSignatureTest, UnsignedAndMalformedSignatures) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  RecordCheck unsigned_check = CheckRecord(keys, HamiRecord(), "u", "n");
  EXPECT_EQ(unsigned_check.verdict, RecordVerdict::kUnsigned);
  EXPECT_THAT(unsigned_check.reason, HasSubstr(kRecordSignature));
  for (const char* bad :
       {"", "v1.k1", "v2.k1.AAAA", "v1.k1.!!!", "v1.nope.AAAA"}) {
    Annotations record = HamiRecord();
    record[kRecordSignature] = bad;
    EXPECT_EQ(Verdict(keys, record), RecordVerdict::kForged) << bad;
  }
  EXPECT_EQ(Verdict(keys, {{keys::kHamiBindPhase, "success"}}),
            RecordVerdict::kNoRecord);
}

TEST(RecordSignatureTest, VolcanoRecordsAreSignedToo) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  Annotations record = Signed(keys, {{keys::kVolcanoAllocation, "GPU-a,40,30;"},
                                     {keys::kVolcanoNode, "node-1"}});
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kValid);
  record[keys::kVolcanoAllocation] = "GPU-b,40,30;";
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kForged);
}

TEST(RecordSignatureTest, MigRuntimeIdsTheAgentAddsKeepTheSignature) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  Annotations decided = HamiRecord();
  decided[keys::kHamiMigAllocations] =
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
      R"("profile":"3g.40gb","placement":{"start":4,"size":4}}])";
  Annotations record = Signed(keys, decided);
  record[keys::kHamiMigAllocations] =
      R"([{"computeInstanceID":0,"containerIndex":0,"deviceIndex":0,)"
      R"("gpuInstanceID":2,"gpuUUID":"GPU-a","migUUID":"MIG-x",)"
      R"("placement":{"size":4,"start":4},"profile":"3g.40gb"}])";
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kValid);
  record[keys::kHamiMigAllocations] =
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
      R"("profile":"7g.80gb","placement":{"start":0,"size":8}}])";
  EXPECT_EQ(Verdict(keys, record), RecordVerdict::kForged);
}

TEST(RecordSignatureTest, RotationAcceptsBothKeysAndSignsWithTheFirst) {
  const RecordKeys old_keys = Keys(KeyLine("2026-05", 'o'));
  const RecordKeys rotating =
      Keys(KeyLine("2026-11", 'n') + KeyLine("2026-05", 'o'));
  const RecordKeys rotated = Keys(KeyLine("2026-11", 'n'));
  const Annotations before = Signed(old_keys, HamiRecord());
  const Annotations after = Signed(rotating, HamiRecord());
  EXPECT_THAT(after.at(kRecordSignature), ::testing::StartsWith("v1.2026-11."));
  EXPECT_EQ(Verdict(rotating, before), RecordVerdict::kValid);
  EXPECT_EQ(Verdict(rotating, after), RecordVerdict::kValid);
  EXPECT_EQ(Verdict(rotated, after), RecordVerdict::kValid);
  RecordCheck dropped = CheckRecord(rotated, before, "uid-1", "node-1");
  EXPECT_EQ(dropped.verdict, RecordVerdict::kForged);
  EXPECT_THAT(dropped.reason, HasSubstr("unknown key id \"2026-05\""));
}

TEST(RecordSignatureTest, PolicyAcceptsUnsignedOnlyWhenAsked) {
  EXPECT_TRUE(RecordPolicy{}.Accepts(RecordVerdict::kValid));
  EXPECT_TRUE(RecordPolicy{}.Accepts(RecordVerdict::kNoRecord));
  EXPECT_FALSE(RecordPolicy{}.Accepts(RecordVerdict::kUnsigned));
  EXPECT_FALSE(RecordPolicy{}.Accepts(RecordVerdict::kForged));
  EXPECT_TRUE(
      RecordPolicy{.accept_unsigned = true}.Accepts(RecordVerdict::kUnsigned));
  EXPECT_FALSE(
      RecordPolicy{.accept_unsigned = true}.Accepts(RecordVerdict::kForged));
}

TEST(RecordKeysTest, KeyFileErrorsNameTheLineAndField) {
  EXPECT_THAT(
      RecordKeys::Parse("# only a comment\n", "f").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no key")));
  EXPECT_THAT(
      RecordKeys::Parse("k1 AAAA\n", "f").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("f:1: expected")));
  EXPECT_THAT(RecordKeys::Parse(
                  "\nbad id: " + absl::Base64Escape(std::string(32, 'a')), "f")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f:2: key id \"bad id\"")));
  EXPECT_THAT(
      RecordKeys::Parse("k1: ###\n", "f").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not base64")));
  EXPECT_THAT(
      RecordKeys::Parse("k1: " + absl::Base64Escape("short"), "f").status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("secret has 5 bytes, want 32..1024")));
  EXPECT_THAT(
      RecordKeys::Parse(KeyLine("k1", 'a') + KeyLine("k1", 'b'), "f").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
}

}  // namespace
}  // namespace deviceshare::trust

namespace deviceshare::trust {
namespace {

dra::AllocatedClaim Claim(const std::string& uid) {
  dra::AllocatedClaim claim;
  claim.ns = "ml";
  claim.name = "train";
  claim.uid = uid;
  claim.results.push_back(dra::AllocatedDevice{
      .request = "gpu",
      .driver = "gpu.deviceshare.io",
      .pool = "node-1",
      .device = "gpu-0",
      .share_id = "abc",
      .consumed = {{"cores", 30}, {"memory", int64_t{4} << 30}}});
  return claim;
}

TEST(ClaimSignatureTest, SignedAllocationsAreValidAndOthersNot) {
  const RecordKeys keys = Keys(KeyLine("k1", 'a'));
  const std::map<std::string, std::string> annotations = {
      {kAllocationSignature, SignClaimAllocation(keys, Claim("c1"), "node-1")}};
  EXPECT_EQ(
      CheckClaimAllocation(keys, annotations, Claim("c1"), "node-1").verdict,
      RecordVerdict::kValid);
  // Another claim with the same annotation, another node, more memory.
  EXPECT_EQ(
      CheckClaimAllocation(keys, annotations, Claim("c2"), "node-1").verdict,
      RecordVerdict::kForged);
  EXPECT_EQ(
      CheckClaimAllocation(keys, annotations, Claim("c1"), "node-2").verdict,
      RecordVerdict::kForged);
  dra::AllocatedClaim more = Claim("c1");
  more.results[0].consumed["memory"] *= 2;
  EXPECT_EQ(CheckClaimAllocation(keys, annotations, more, "node-1").verdict,
            RecordVerdict::kForged);
  EXPECT_EQ(CheckClaimAllocation(keys, {}, Claim("c1"), "node-1").verdict,
            RecordVerdict::kUnsigned);
  EXPECT_EQ(
      CheckClaimAllocation(keys, {}, dra::AllocatedClaim{}, "node-1").verdict,
      RecordVerdict::kNoRecord);
  // A pod record's signature is no claim's.
  EXPECT_EQ(
      CheckClaimAllocation(keys,
                           {{kAllocationSignature,
                             SignRecord(keys, HamiRecord(), "c1", "node-1")}},
                           Claim("c1"), "node-1")
          .verdict,
      RecordVerdict::kForged);
}

}  // namespace
}  // namespace deviceshare::trust
