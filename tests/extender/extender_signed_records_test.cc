// serve's side of signed records: /bind signs what it writes, and a record
// read from the watch is charged only when its signature holds (or the pod
// is already Running, or unsigned records are accepted).
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/trust/record_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/extender_calls.h"
#include "testing/fakes.h"
#include "testing/kube_objects.h"
#include "testing/temp_folder.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::BindingFor;
using ::deviceshare::testing::ExtenderHarness;
using ::deviceshare::testing::FilterArgs;
using ::deviceshare::testing::HamiBoundPodObject;
using ::deviceshare::testing::HamiPodObject;
using ::testing::ElementsAre;
using json = nlohmann::json;

// The key file and its source, made before the harness's extender.
struct RecordKeyFile {
  RecordKeyFile() {
    std::ofstream(folder.File("keys"))
        << "k1: " << absl::Base64Escape(std::string(32, 'k')) << "\n";
    keys = *trust::RecordKeySource::Create(folder.File("keys"), &clock);
  }
  testing::TempFolder folder;
  testing::FakeClock clock;
  std::unique_ptr<trust::RecordKeySource> keys;
};

ExtenderOptions Signing(trust::RecordKeySource* keys, bool accept_unsigned) {
  ExtenderOptions options;
  options.record_keys = keys;
  options.record_policy.accept_unsigned = accept_unsigned;
  return options;
}

class ExtenderSignedRecordsTest : public RecordKeyFile,
                                  public ::testing::Test,
                                  public ExtenderHarness {
 protected:
  explicit ExtenderSignedRecordsTest(bool accept_unsigned = false)
      : ExtenderHarness(Signing(keys.get(), accept_unsigned)) {
    AddNodes({{.name = "n1", .gpus = 2}});
  }

  int64_t UsedMib() const {
    int64_t used = 0;
    scheduler_->Inspect([&](const ClusterState& state) {
      const NodeState* node = state.FindNode("n1");
      for (size_t i = 0; i < node->gpu_count(); ++i) {
        used += node->ledger(i).used_memory_mib();
      }
    });
    return used;
  }

  // A pod bound to n1 by someone else, 5,000 MiB on GPU 0, in `phase`,
  // its record's annotations merged with `extra`.
  json Planted(const std::string& name, const std::string& phase,
               const json& extra = json::object()) {
    json pod = HamiBoundPodObject({.name = name, .memory_mib = 5000}, "n1", 0);
    pod["status"]["phase"] = phase;
    for (const auto& [key, value] : extra.items()) {
      pod["metadata"]["annotations"][key] = value;
    }
    return pod;
  }
};

TEST_F(ExtenderSignedRecordsTest, BindSignsTheRecordItWrites) {
  const json pod = AddPod(HamiPodObject({.name = "p", .memory_mib = 3000}));
  ASSERT_THAT(extender_.Filter(FilterArgs(pod, {"n1"})).node_names,
              ElementsAre("n1"));
  ASSERT_EQ(extender_.Bind(BindingFor(pod, "n1")), "");
  const json written = *writer_.Pod("default/p");
  const std::map<std::string, std::string> annotations =
      PodAnnotationMap(written);
  ASSERT_TRUE(annotations.contains(trust::kRecordSignature));
  EXPECT_EQ(
      trust::CheckRecord(*keys->Keys(), annotations, "uid-p", "n1").verdict,
      trust::RecordVerdict::kValid);
  // The watch's echo of the pod keeps it charged.
  extender_.OnPodEvent("MODIFIED", written);
  EXPECT_EQ(UsedMib(), 3000);
}

TEST_F(ExtenderSignedRecordsTest, UnsignedOrForgedRecordsAreNotCharged) {
  extender_.OnPodEvent("ADDED", Planted("unsigned", "Pending"));
  extender_.OnPodEvent(
      "ADDED", Planted("forged", "Pending",
                       {{trust::kRecordSignature, "v1.k1.AAAAAAAAAAAAAAAA"}}));
  EXPECT_EQ(UsedMib(), 0);
  EXPECT_EQ(extender_.stats().unaccounted_pods, 0);
}

TEST_F(ExtenderSignedRecordsTest, RunningPodsAreChargedWhateverTheirRecord) {
  // Their containers hold the GPUs already: leaving them out would
  // overcommit.
  extender_.OnPodEvent("ADDED", Planted("running", "Running"));
  EXPECT_EQ(UsedMib(), 5000);
}

TEST_F(ExtenderSignedRecordsTest, AValidlySignedRecordIsCharged) {
  json pod = Planted("signed", "Pending");
  pod["metadata"]["annotations"][trust::kRecordSignature] = trust::SignRecord(
      *keys->Keys(), PodAnnotationMap(pod), "uid-signed", "n1");
  extender_.OnPodEvent("ADDED", pod);
  EXPECT_EQ(UsedMib(), 5000);
  // Tampered afterwards (a signed key changed): released.
  pod["metadata"]["annotations"][keys::kHamiNode] = "n2";
  extender_.OnPodEvent("MODIFIED", pod);
  EXPECT_EQ(UsedMib(), 0);
}

class ExtenderAcceptUnsignedTest : public ExtenderSignedRecordsTest {
 protected:
  ExtenderAcceptUnsignedTest() : ExtenderSignedRecordsTest(true) {}
};

TEST_F(ExtenderAcceptUnsignedTest, UnsignedIsChargedForgedIsNot) {
  extender_.OnPodEvent("ADDED", Planted("unsigned", "Pending"));
  EXPECT_EQ(UsedMib(), 5000);
  extender_.OnPodEvent(
      "ADDED", Planted("forged", "Pending",
                       {{trust::kRecordSignature, "v1.k1.AAAAAAAAAAAAAAAA"}}));
  EXPECT_EQ(UsedMib(), 5000);
}

}  // namespace
}  // namespace deviceshare::extender
