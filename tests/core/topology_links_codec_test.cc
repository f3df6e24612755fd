// The `links` member of hami.io/node-nvidia-register (codec/gpu_links.h):
// encode -> decode is the identity, the existing HAMi decode path reads a
// registration that carries it (and one without it as before), and what
// cannot describe a link is left out with a reason naming field and value,
// the device and the other devices still served.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/model/gpu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::MakeGpu;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Gpu> LinkedGpus() {
  std::vector<Gpu> gpus = {MakeGpu("n", 0), MakeGpu("n", 1),
                           MakeGpu("n", 2, 81920, 10, 1)};
  gpus[0].links = {{1, 12, true, PcieLevel::kSwitch},
                   {2, 0, false, PcieLevel::kSystem}};
  gpus[1].links = {{0, 12, true, PcieLevel::kSwitch},
                   {2, 0, false, PcieLevel::kSystem}};
  gpus[2].links = {{0, 0, false, PcieLevel::kSystem},
                   {1, 0, false, PcieLevel::kSystem}};
  return gpus;
}

TEST(TopologyLinksCodecTest, RoundTrip) {
  const std::vector<Gpu> gpus = LinkedGpus();
  const std::string text = EncodeHamiNodeRegisterJson(gpus);
  EXPECT_THAT(text,
              HasSubstr(R"("health":true,"links":[{"peer":1,"nvlinks":12,)"
                        R"("pcie":"switch","numa":true},{"peer":2,)"
                        R"("nvlinks":0,"pcie":"system","numa":false}]})"));
  auto decoded = DecodeHamiNodeRegister(text);
  ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, gpus);
}

TEST(TopologyLinksCodecTest, NoLinksWritesNoMember) {
  std::vector<Gpu> gpus = {MakeGpu("n", 0)};
  EXPECT_THAT(EncodeHamiNodeRegisterJson(gpus),
              ::testing::Not(HasSubstr("links")));
}

// HAMi's own registration (format_goldens' kHamiRegisterJson form) with
// the member added reads as the same devices with the links.
TEST(TopologyLinksCodecTest,
     HamisRegistrationWithLinksReadsThroughTheHamiPath) {
  const std::string text =
      R"([{"id":"GPU-0","index":0,"count":10,"devmem":81920,"devcore":100,)"
      R"("type":"NVIDIA-NVIDIA A100-SXM4-80GB","numa":0,"mode":"hami-core",)"
      R"("health":true,"devicevendor":"NVIDIA",)"
      R"("links":[{"peer":1,"nvlinks":4,"pcie":"hostbridge","numa":true,)"
      R"("future":1}]},)"
      R"({"id":"GPU-1","index":1,"count":10,"devmem":81920,"devcore":100,)"
      R"("type":"NVIDIA-NVIDIA A100-SXM4-80GB","mode":"hami-core",)"
      R"("health":true}])";
  auto decoded = DecodeHamiNodeRegister(text);
  ASSERT_OK(decoded);
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].uuid, "GPU-0");
  EXPECT_EQ((*decoded)[0].memory_mib, 81920);
  EXPECT_THAT((*decoded)[0].links,
              ElementsAre(GpuLink{1, 4, true, PcieLevel::kHostBridge}));
  EXPECT_THAT((*decoded)[0].links_left_out, IsEmpty());
  EXPECT_THAT((*decoded)[1].links, IsEmpty());
  // Without the member: as before.
  std::string plain = EncodeHamiNodeRegisterJson({MakeGpu("n", 0)});
  auto before = DecodeHamiNodeRegister(plain);
  ASSERT_OK(before);
  EXPECT_THAT((*before)[0].links, IsEmpty());
}

// A register of three devices (indexes 0-2) whose device 0 has `links`.
std::string WithLinks(const std::string& links) {
  std::string out = "[";
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&out, i ? "," : "", R"({"id":"GPU-)", i, R"(","index":)", i,
                    R"(,"count":10,"devmem":1024,"devcore":100,"type":"T4",)",
                    R"("health":true)", i == 0 ? ",\"links\":" + links : "",
                    "}");
  }
  return out + "]";
}

TEST(TopologyLinksCodecTest, BadLinksAreLeftOutNamingFieldAndValue) {
  struct Case {
    std::string links;
    std::vector<std::string> parts;
  };
  const std::string where = "hami.io/node-nvidia-register entry 0 field ";
  const std::vector<Case> cases = {
      {R"([{"peer":9,"nvlinks":2}])",
       {where + "links[0].peer: 9", "names no device of the node"}},
      {R"([{"peer":0}])", {where + "links[0].peer: 0", "the device itself"}},
      {R"([{"peer":1,"nvlinks":-3}])",
       {where + "links[0].nvlinks: -3", "is negative"}},
      {R"([{"peer":1,"nvlinks":5000}])",
       {where + "links[0].nvlinks: 5000", "out of range (max 1024)"}},
      {R"([{"peer":1,"pcie":"bridge"}])",
       {where + "links[0].pcie: \"bridge\"", "is not a PCIe level",
        "board, switch, switches, hostbridge, numa or system"}},
      {R"([{"peer":1,"numa":"yes"}])",
       {where + "links[0].numa: \"yes\"", "is not a boolean"}},
      {R"([{"nvlinks":1}])", {where + "links[0].peer: is missing"}},
      {R"(["GPU-1"])", {where + "links[0]: \"GPU-1\"", "not a JSON object"}},
      {R"({"peer":1})", {where + "links: {\"peer\":1}", "not a JSON list"}},
      {R"([{"peer":1},{"peer":1}])",
       {where + "links[1].peer: 1", "listed twice"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.links);
    auto decoded = DecodeHamiNodeRegister(WithLinks(c.links));
    ASSERT_OK(decoded);  // HAMi ignores the member: the node is served
    ASSERT_EQ(decoded->size(), 3u);
    ASSERT_EQ((*decoded)[0].links_left_out.size(), 1u);
    for (const std::string& part : c.parts) {
      EXPECT_THAT((*decoded)[0].links_left_out[0], HasSubstr(part));
    }
    EXPECT_TRUE((*decoded)[1].healthy);
    EXPECT_TRUE((*decoded)[2].healthy);
  }
  // The readable links of a list stay.
  auto mixed = DecodeHamiNodeRegister(
      WithLinks(R"([{"peer":1,"nvlinks":2},{"peer":2,"pcie":"pci"}])"));
  ASSERT_OK(mixed);
  EXPECT_THAT((*mixed)[0].links,
              ElementsAre(GpuLink{1, 2, false, PcieLevel::kSystem}));
  EXPECT_THAT(
      (*mixed)[0].links_left_out,
      ElementsAre(AllOf(HasSubstr("links[1].pcie"), HasSubstr("\"pci\""))));
}

}  // namespace
}  // namespace deviceshare
