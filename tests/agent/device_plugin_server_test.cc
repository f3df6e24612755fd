// DevicePluginServer against TestKubelet, which drives it the way kubelet's
// device manager does (testing/test_kubelet.h).
#include "deviceshare/agent/device_plugin_server.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"
#include "testing/temp_folder.h"
#include "testing/test_kubelet.h"
#include "testing/wait_for.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::AdmittedContainer;
using ::deviceshare::testing::IsOk;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::TestKubelet;
using ::deviceshare::testing::WaitFor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAreArray;

constexpr char kGpu[] = "nvidia.com/gpu";
constexpr absl::Duration kPrompt = absl::Seconds(1);

// Grants derived from the ids, so that a test can tell what reached the
// container; errors on demand. Preferred() answers the available ids from
// the end, so that its answer differs from kubelet's own first pick.
class ScriptedAllocator : public ContainerAllocator {
 public:
  absl::StatusOr<std::vector<std::string>> Preferred(
      const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size) override {
    absl::MutexLock lock(&mu_);
    preferred_requests_.push_back({available, must_include, size});
    if (!preferred_error_.ok()) return preferred_error_;
    std::vector<std::string> ids = must_include;
    for (auto it = available.rbegin();
         it != available.rend() && static_cast<int>(ids.size()) < size; ++it) {
      if (std::find(ids.begin(), ids.end(), *it) == ids.end()) {
        ids.push_back(*it);
      }
    }
    return ids;
  }

  absl::StatusOr<ContainerGrant> Allocate(
      const std::vector<std::string>& device_ids) override {
    absl::MutexLock lock(&mu_);
    allocations_.push_back(device_ids);
    if (!allocate_error_.ok()) return allocate_error_;
    return GrantFor(device_ids);
  }

  absl::Status PreStart(const std::vector<std::string>& device_ids) override {
    absl::MutexLock lock(&mu_);
    pre_starts_.push_back(device_ids);
    return pre_start_error_;
  }

  static ContainerGrant GrantFor(const std::vector<std::string>& device_ids) {
    ContainerGrant grant;
    std::vector<std::string> uuids;
    for (const std::string& id : device_ids) {
      uuids.push_back(ParseDeviceId(id)->gpu_uuid);
    }
    grant.edits.env = {{"NVIDIA_VISIBLE_DEVICES", absl::StrJoin(uuids, ",")},
                       {"DS_REPLICAS", absl::StrJoin(device_ids, ",")}};
    grant.edits.mounts = {
        {"/usr/local/vgpu/libvgpu.so", "/usr/local/vgpu/libvgpu.so", true},
        {"/tmp/vgpu/cache", "/tmp/vgpu", false}};
    grant.edits.device_ids = uuids;
    for (const std::string& uuid : uuids) {
      grant.cdi_devices.push_back("k8s.deviceshare.io/gpu=" + uuid);
    }
    grant.device_nodes = {{"/dev/nvidiactl", "/dev/nvidiactl", "rw"},
                          {"/dev/nvidia-uvm", "/dev/nvidia-uvm", "rwm"}};
    grant.annotations = {
        {"deviceshare.io/replicas", absl::StrJoin(device_ids, ",")}};
    return grant;
  }

  struct PreferredRequest {
    std::vector<std::string> available;
    std::vector<std::string> must_include;
    int size = 0;
  };

  void set_allocate_error(absl::Status s) {
    absl::MutexLock lock(&mu_);
    allocate_error_ = std::move(s);
  }
  void set_pre_start_error(absl::Status s) {
    absl::MutexLock lock(&mu_);
    pre_start_error_ = std::move(s);
  }
  std::vector<PreferredRequest> preferred_requests() const {
    absl::MutexLock lock(&mu_);
    return preferred_requests_;
  }
  std::vector<std::vector<std::string>> allocations() const {
    absl::MutexLock lock(&mu_);
    return allocations_;
  }
  std::vector<std::vector<std::string>> pre_starts() const {
    absl::MutexLock lock(&mu_);
    return pre_starts_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Status preferred_error_;
  absl::Status allocate_error_;
  absl::Status pre_start_error_;
  std::vector<PreferredRequest> preferred_requests_;
  std::vector<std::vector<std::string>> allocations_;
  std::vector<std::vector<std::string>> pre_starts_;
};

// GPU-a and GPU-b, `replicas` ids each, on NUMA nodes 0 and 1.
std::vector<AdvertisedDevice> TwoGpus(int replicas) {
  std::vector<AdvertisedDevice> devices;
  for (int r = 0; r < replicas; ++r) {
    devices.push_back({ReplicaDeviceId("GPU-a", r), true, 0});
  }
  for (int r = 0; r < replicas; ++r) {
    devices.push_back({ReplicaDeviceId("GPU-b", r), true, 1});
  }
  return devices;
}

class DevicePluginServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: a unix socket path must fit in 108 bytes.
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    kubelet_ = std::make_unique<TestKubelet>(dir_);
  }

  void TearDown() override {
    servers_.clear();
    kubelet_.reset();
  }

  DevicePluginServerOptions FastOptions(
      const std::string& resource = kGpu) const {
    DevicePluginServerOptions options;
    options.device_plugin_dir = dir_;
    options.resource_name = resource;
    options.watchdog_interval = absl::Milliseconds(50);
    options.register_backoff_initial = absl::Milliseconds(50);
    options.register_backoff_max = absl::Milliseconds(200);
    options.register_timeout = absl::Seconds(2);
    return options;
  }

  DevicePluginServer& NewServer(DevicePluginServerOptions options) {
    servers_.push_back(
        std::make_unique<DevicePluginServer>(std::move(options), &allocator_));
    return *servers_.back();
  }

  // A started kubelet and a registered plugin advertising `devices`.
  DevicePluginServer& StartBoth(const std::vector<AdvertisedDevice>& devices) {
    EXPECT_THAT(kubelet_->Start(), IsOk());
    DevicePluginServer& server = NewServer(FastOptions());
    server.SetDevices(devices);
    EXPECT_THAT(server.Start(), IsOk());
    EXPECT_TRUE(kubelet_->WaitForDevices(
        kGpu, [&](const auto& seen) { return seen == devices; }, kPrompt));
    return server;
  }

  nlohmann::json ReadCheckpoint() const {
    std::ifstream in(kubelet_->checkpoint_path());
    return nlohmann::json::parse(in);
  }

  ::deviceshare::testing::TempFolder folder_{"dsdp-"};
  std::string dir_;
  ScriptedAllocator allocator_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::vector<std::unique_ptr<DevicePluginServer>> servers_;
};

TEST(DefaultEndpointTest, IsAFileNameDerivedFromTheResource) {
  EXPECT_EQ(DefaultEndpoint("nvidia.com/gpu"),
            "deviceshare-nvidia.com-gpu.sock");
  EXPECT_EQ(DefaultEndpoint("volcano.sh/vgpu-number"),
            "deviceshare-volcano.sh-vgpu-number.sock");
}

TEST_F(DevicePluginServerTest, RegistersWithVersionEndpointResourceAndOptions) {
  ASSERT_THAT(kubelet_->Start(), IsOk());
  DevicePluginServer& gpu = NewServer(FastOptions());
  DevicePluginServerOptions vgpu_options =
      FastOptions("volcano.sh/vgpu-number");
  vgpu_options.endpoint = "vgpu.sock";
  vgpu_options.pre_start_required = false;
  vgpu_options.get_preferred_allocation = false;
  DevicePluginServer& vgpu = NewServer(vgpu_options);

  ASSERT_THAT(gpu.Start(), IsOk());
  ASSERT_THAT(vgpu.Start(), IsOk());

  // The plugin counts a registration once kubelet has answered.
  ASSERT_TRUE(
      WaitFor([&] { return gpu.registered() && vgpu.registered(); }, kPrompt));
  ASSERT_EQ(kubelet_->registrations(), 2);
  const auto log = kubelet_->registration_log();
  EXPECT_EQ(log[0].version, "v1beta1");
  EXPECT_EQ(log[0].endpoint, "deviceshare-nvidia.com-gpu.sock");
  EXPECT_EQ(log[0].resource_name, "nvidia.com/gpu");
  EXPECT_TRUE(log[0].pre_start_required);
  EXPECT_TRUE(log[0].get_preferred_allocation_available);
  EXPECT_EQ(log[1].version, "v1beta1");
  EXPECT_EQ(log[1].endpoint, "vgpu.sock");
  EXPECT_EQ(log[1].resource_name, "volcano.sh/vgpu-number");
  EXPECT_FALSE(log[1].pre_start_required);
  EXPECT_FALSE(log[1].get_preferred_allocation_available);

  EXPECT_EQ(gpu.socket_path(), dir_ + "/deviceshare-nvidia.com-gpu.sock");
  EXPECT_TRUE(std::filesystem::exists(gpu.socket_path()));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/vgpu.sock"));
  EXPECT_TRUE(gpu.registered());
  EXPECT_EQ(gpu.stats().registrations, 1);
  EXPECT_EQ(gpu.stats().serves, 1);
  EXPECT_TRUE(WaitFor([&] { return kubelet_->stream_open(kGpu); }, kPrompt));
}

TEST_F(DevicePluginServerTest, ListAndWatchSendsTheListAndHealthChanges) {
  const std::vector<AdvertisedDevice> devices = TwoGpus(2);
  DevicePluginServer& server = StartBoth(devices);
  EXPECT_EQ(kubelet_->devices(kGpu)[2].numa_node, 1);

  std::vector<AdvertisedDevice> sick = devices;
  sick[1].healthy = false;
  server.SetDevices(sick);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [&](const auto& seen) { return seen == sick; }, kPrompt));

  server.SetDevices(devices);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [&](const auto& seen) { return seen == devices; }, kPrompt));

  // A device without topology is sent without it.
  std::vector<AdvertisedDevice> plain = {{"GPU-c::0", true, -1}};
  server.SetDevices(plain);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [&](const auto& seen) { return seen == plain; }, kPrompt));
  EXPECT_EQ(kubelet_->device_updates(kGpu), 4);
  EXPECT_EQ(server.stats().list_and_watch_streams, 1);
  // Counted once Write() returned, which may be after kubelet read it.
  EXPECT_TRUE(WaitFor([&] { return server.stats().list_and_watch_sends == 4; },
                      kPrompt));
}

TEST_F(DevicePluginServerTest, AdmissionMapsIdsAndEditsAndWritesCheckpoint) {
  const std::vector<AdvertisedDevice> devices = TwoGpus(2);
  DevicePluginServer& server = StartBoth(devices);

  absl::StatusOr<AdmittedContainer> admitted =
      kubelet_->AdmitContainer("pod-1", "main", kGpu, 2);
  ASSERT_THAT(admitted, IsOk());

  // Kubelet asked for a preference among all healthy ids and took it.
  const auto preferred = allocator_.preferred_requests();
  ASSERT_EQ(preferred.size(), 1u);
  EXPECT_THAT(preferred[0].available,
              ElementsAre("GPU-a::0", "GPU-a::1", "GPU-b::0", "GPU-b::1"));
  EXPECT_TRUE(preferred[0].must_include.empty());
  EXPECT_EQ(preferred[0].size, 2);
  EXPECT_THAT(admitted->preferred, ElementsAre("GPU-b::1", "GPU-b::0"));
  EXPECT_THAT(admitted->device_ids, ElementsAre("GPU-b::1", "GPU-b::0"));
  EXPECT_THAT(allocator_.allocations(),
              ElementsAre(ElementsAre("GPU-b::1", "GPU-b::0")));
  EXPECT_THAT(allocator_.pre_starts(),
              ElementsAre(ElementsAre("GPU-b::1", "GPU-b::0")));

  // The grant reached the container field by field.
  const ContainerGrant grant =
      ScriptedAllocator::GrantFor({"GPU-b::1", "GPU-b::0"});
  EXPECT_THAT(admitted->envs,
              ElementsAre(Pair("DS_REPLICAS", "GPU-b::1,GPU-b::0"),
                          Pair("NVIDIA_VISIBLE_DEVICES", "GPU-b,GPU-b")));
  EXPECT_EQ(admitted->mounts, grant.edits.mounts);
  EXPECT_EQ(admitted->devices, grant.device_nodes);
  EXPECT_EQ(admitted->cdi_devices, grant.cdi_devices);
  EXPECT_THAT(admitted->annotations, ElementsAre(Pair("deviceshare.io/replicas",
                                                      "GPU-b::1,GPU-b::0")));

  // The checkpoint, as kubelet writes it.
  const nlohmann::json checkpoint = ReadCheckpoint();
  ASSERT_TRUE(checkpoint["Checksum"].is_number_unsigned());
  const nlohmann::json& entries = checkpoint["Data"]["PodDeviceEntries"];
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["PodUID"], "pod-1");
  EXPECT_EQ(entries[0]["ContainerName"], "main");
  EXPECT_EQ(entries[0]["ResourceName"], kGpu);
  EXPECT_EQ(entries[0]["DeviceIDs"],
            nlohmann::json::parse(R"({"1":["GPU-b::1","GPU-b::0"]})"));
  std::string bytes;
  ASSERT_TRUE(
      absl::Base64Unescape(entries[0]["AllocResp"].get<std::string>(), &bytes));
  v1beta1::ContainerAllocateResponse response;
  ASSERT_TRUE(response.ParseFromString(bytes));
  EXPECT_EQ(response.envs().at("NVIDIA_VISIBLE_DEVICES"), "GPU-b,GPU-b");
  ASSERT_EQ(response.cdi_devices_size(), 2);
  EXPECT_EQ(response.cdi_devices(0).name(), "k8s.deviceshare.io/gpu=GPU-b");
  EXPECT_EQ(checkpoint["Data"]["RegisteredDevices"][kGpu].size(), 4u);

  EXPECT_EQ(server.stats().preferred_calls, 1);
  EXPECT_EQ(server.stats().allocate_calls, 1);
  EXPECT_EQ(server.stats().prestart_calls, 1);
  EXPECT_EQ(server.stats().errors, 0);

  // The rest goes to the next container; none is left after that.
  ASSERT_THAT(kubelet_->AdmitContainer("pod-2", "main", kGpu, 2), IsOk());
  EXPECT_THAT(kubelet_->AdmitContainer("pod-3", "main", kGpu, 1),
              StatusIs(absl::StatusCode::kResourceExhausted));
  ASSERT_THAT(kubelet_->ReleasePod("pod-1"), IsOk());
  EXPECT_THAT(kubelet_->AdmitContainer("pod-3", "main", kGpu, 1), IsOk());
  EXPECT_EQ(ReadCheckpoint()["Data"]["PodDeviceEntries"].size(), 2u);
}

TEST_F(DevicePluginServerTest, WithoutPreferenceOrPreStartTheyAreNotCalled) {
  ASSERT_THAT(kubelet_->Start(), IsOk());
  DevicePluginServerOptions options = FastOptions();
  options.get_preferred_allocation = false;
  options.pre_start_required = false;
  DevicePluginServer& server = NewServer(options);
  server.SetDevices(TwoGpus(1));
  ASSERT_THAT(server.Start(), IsOk());
  ASSERT_TRUE(kubelet_->WaitForDevices(
      kGpu, [](const auto& seen) { return seen.size() == 2; }, kPrompt));

  absl::StatusOr<AdmittedContainer> admitted =
      kubelet_->AdmitContainer("pod-1", "main", kGpu, 1);
  ASSERT_THAT(admitted, IsOk());
  EXPECT_THAT(admitted->device_ids, ElementsAre("GPU-a::0"));
  EXPECT_TRUE(admitted->preferred.empty());
  EXPECT_TRUE(allocator_.preferred_requests().empty());
  EXPECT_TRUE(allocator_.pre_starts().empty());
  EXPECT_EQ(server.stats().allocate_calls, 1);
}

TEST_F(DevicePluginServerTest, AllocatorErrorsReachKubeletWithTheirMessage) {
  DevicePluginServer& server = StartBoth(TwoGpus(2));
  allocator_.set_allocate_error(absl::FailedPreconditionError(
      "GPU-b::1,GPU-b::0: no pending pod on this node asked for them"));
  EXPECT_THAT(
      kubelet_->AdmitContainer("pod-1", "main", kGpu, 2),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("no pending pod on this node asked for them")));
  EXPECT_TRUE(kubelet_->holds().empty());
  EXPECT_EQ(server.stats().errors, 1);

  // The failed admission reserved nothing: the next one gets the same ids.
  allocator_.set_allocate_error(absl::OkStatus());
  allocator_.set_pre_start_error(
      absl::UnavailableError("MPS daemon for GPU-b is not running"));
  EXPECT_THAT(kubelet_->AdmitContainer("pod-1", "main", kGpu, 2),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("MPS daemon for GPU-b is not running")));
  EXPECT_EQ(server.stats().errors, 2);
}

TEST_F(DevicePluginServerTest, UnknownOrRepeatedIdsAreRefused) {
  DevicePluginServer& server = StartBoth(TwoGpus(1));
  auto stub = v1beta1::DevicePlugin::NewStub(grpc::CreateChannel(
      "unix://" + server.socket_path(), grpc::InsecureChannelCredentials()));
  {
    v1beta1::AllocateRequest request;
    request.add_container_requests()->add_devices_ids("GPU-z::7");
    v1beta1::AllocateResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->Allocate(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(),
                HasSubstr("\"GPU-z::7\" is not one this plugin advertises"));
  }
  {
    v1beta1::AllocateRequest request;
    auto* container = request.add_container_requests();
    container->add_devices_ids("GPU-a::0");
    container->add_devices_ids("GPU-a::0");
    v1beta1::AllocateResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->Allocate(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("named twice"));
  }
  {
    v1beta1::PreferredAllocationRequest request;
    auto* container = request.add_container_requests();
    container->add_available_deviceids("GPU-a::0");
    container->add_must_include_deviceids("GPU-q::0");
    container->set_allocation_size(1);
    v1beta1::PreferredAllocationResponse response;
    grpc::ClientContext context;
    const grpc::Status status =
        stub->GetPreferredAllocation(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("GPU-q::0"));
  }
  {
    v1beta1::PreStartContainerRequest request;
    request.add_devices_ids("GPU-a::9");
    v1beta1::PreStartContainerResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(
        stub->PreStartContainer(&context, request, &response).error_code(),
        grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_TRUE(allocator_.allocations().empty());
  EXPECT_TRUE(allocator_.preferred_requests().empty());
  EXPECT_TRUE(allocator_.pre_starts().empty());
  EXPECT_EQ(server.stats().errors, 4);
}

TEST_F(DevicePluginServerTest, ReregistersAfterKubeletRestart) {
  const std::vector<AdvertisedDevice> devices = TwoGpus(2);
  DevicePluginServer& server = StartBoth(devices);
  ASSERT_THAT(kubelet_->AdmitContainer("pod-1", "main", kGpu, 1), IsOk());

  ASSERT_THAT(kubelet_->Restart(), IsOk());
  // The restart removed the plugin's socket and left the ids unhealthy.
  EXPECT_TRUE(std::filesystem::exists(kubelet_->checkpoint_path()));
  ASSERT_TRUE(WaitFor([&] { return server.stats().registrations == 2; },
                      absl::Seconds(2)));
  EXPECT_EQ(kubelet_->registrations(), 2);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [&](const auto& seen) { return seen == devices; }, kPrompt));
  EXPECT_TRUE(std::filesystem::exists(server.socket_path()));
  EXPECT_EQ(server.stats().registrations, 2);
  EXPECT_EQ(server.stats().serves, 2);
  EXPECT_EQ(server.stats().list_and_watch_streams, 2);

  // Admission works on the new connection and keeps the old hold.
  absl::StatusOr<AdmittedContainer> admitted =
      kubelet_->AdmitContainer("pod-2", "main", kGpu, 3);
  ASSERT_THAT(admitted, IsOk());
  EXPECT_EQ(kubelet_->holds().size(), 2u);
}

TEST_F(DevicePluginServerTest, ReregistersWhenOnlyKubeletSockIsReplaced) {
  DevicePluginServer& server = StartBoth(TwoGpus(1));
  // A kubelet that comes back without cleaning the directory: the plugin's
  // socket stays, kubelet.sock is a new file.
  kubelet_->Stop();
  ASSERT_TRUE(std::filesystem::exists(server.socket_path()));
  ASSERT_THAT(kubelet_->Start(), IsOk());

  ASSERT_TRUE(WaitFor([&] { return server.stats().registrations == 2; },
                      absl::Seconds(2)));
  EXPECT_EQ(kubelet_->registrations(), 2);
  EXPECT_EQ(server.stats().serves, 1);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [](const auto& seen) { return seen == TwoGpus(1); }, kPrompt));
}

TEST_F(DevicePluginServerTest, ServesAgainWhenItsSocketIsDeleted) {
  DevicePluginServer& server = StartBoth(TwoGpus(1));
  ASSERT_TRUE(std::filesystem::remove(server.socket_path()));

  ASSERT_TRUE(WaitFor([&] { return server.stats().registrations == 2; },
                      absl::Seconds(2)));
  EXPECT_EQ(kubelet_->registrations(), 2);
  EXPECT_TRUE(std::filesystem::exists(server.socket_path()));
  EXPECT_EQ(server.stats().serves, 2);
  EXPECT_EQ(server.stats().registrations, 2);
  // The ids are usable again once the new stream has sent them.
  ASSERT_TRUE(kubelet_->WaitForDevices(
      kGpu, [](const auto& seen) { return seen == TwoGpus(1); }, kPrompt));
  EXPECT_TRUE(WaitFor([&] { return kubelet_->stream_open(kGpu); }, kPrompt));
  EXPECT_THAT(kubelet_->AdmitContainer("pod-1", "main", kGpu, 1), IsOk());
}

TEST_F(DevicePluginServerTest, RegistersOnceKubeletComesUp) {
  // A stale kubelet.sock nobody listens on: Register fails and is retried.
  { std::ofstream(kubelet_->kubelet_socket()) << ""; }
  DevicePluginServer& server = NewServer(FastOptions());
  server.SetDevices(TwoGpus(1));
  ASSERT_THAT(server.Start(), IsOk());
  EXPECT_FALSE(server.registered());
  ASSERT_TRUE(WaitFor([&] { return server.stats().register_failures >= 2; },
                      absl::Seconds(2)));

  // No kubelet.sock at all: nothing to call.
  std::filesystem::remove(kubelet_->kubelet_socket());
  absl::SleepFor(absl::Milliseconds(300));
  const int failures = server.stats().register_failures;
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(server.stats().register_failures, failures);

  ASSERT_THAT(kubelet_->Start(), IsOk());
  ASSERT_TRUE(WaitFor([&] { return server.registered(); }, kPrompt));
  EXPECT_EQ(kubelet_->registrations(), 1);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kGpu, [](const auto& seen) { return seen == TwoGpus(1); }, kPrompt));
}

TEST_F(DevicePluginServerTest, ConcurrentAdmissionsNeverShareAnId) {
  DevicePluginServer& server = StartBoth(TwoGpus(8));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 2;
  std::vector<std::thread> threads;
  std::vector<absl::Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kPerThread; ++c) {
        auto admitted = kubelet_->AdmitContainer(
            "pod-" + std::to_string(t), "c" + std::to_string(c), kGpu, 1);
        if (!admitted.ok()) failures[t] = admitted.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& failure : failures) EXPECT_THAT(failure, IsOk());

  std::vector<std::string> held;
  for (const auto& hold : kubelet_->holds()) {
    held.insert(held.end(), hold.device_ids.begin(), hold.device_ids.end());
  }
  std::vector<std::string> all;
  for (const AdvertisedDevice& device : TwoGpus(8)) all.push_back(device.id);
  EXPECT_THAT(held, UnorderedElementsAreArray(all));  // each exactly once

  const nlohmann::json entries = ReadCheckpoint()["Data"]["PodDeviceEntries"];
  ASSERT_EQ(entries.size(), static_cast<size_t>(kThreads * kPerThread));
  std::vector<std::string> checkpointed;
  for (const nlohmann::json& entry : entries) {
    for (const auto& [numa, ids] : entry["DeviceIDs"].items()) {
      for (const auto& id : ids) checkpointed.push_back(id);
    }
  }
  EXPECT_THAT(checkpointed, UnorderedElementsAreArray(all));
  EXPECT_EQ(server.stats().allocate_calls, kThreads * kPerThread);
  EXPECT_THAT(kubelet_->AdmitContainer("late", "c", kGpu, 1),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST_F(DevicePluginServerTest, StopEndsStreamsAndRemovesTheSocket) {
  DevicePluginServer& server = StartBoth(TwoGpus(1));
  ASSERT_TRUE(WaitFor([&] { return kubelet_->stream_open(kGpu); }, kPrompt));
  EXPECT_THAT(server.Start(), StatusIs(absl::StatusCode::kFailedPrecondition));

  server.Stop();
  EXPECT_FALSE(std::filesystem::exists(server.socket_path()));
  EXPECT_TRUE(WaitFor([&] { return !kubelet_->stream_open(kGpu); }, kPrompt));
  EXPECT_FALSE(server.registered());
  server.Stop();  // idempotent

  // A stopped server starts again.
  ASSERT_THAT(server.Start(), IsOk());
  EXPECT_TRUE(WaitFor([&] { return kubelet_->registrations() == 2; }, kPrompt));
}

TEST_F(DevicePluginServerTest, BadOptionsNameTheField) {
  DevicePluginServerOptions options = FastOptions("gpu");
  EXPECT_THAT(NewServer(options).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("resource_name \"gpu\"")));
  options = FastOptions();
  options.endpoint = "a/b.sock";
  EXPECT_THAT(NewServer(options).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("endpoint \"a/b.sock\"")));
  options = FastOptions();
  options.device_plugin_dir = "/tmp/" + std::string(120, 'd');
  EXPECT_THAT(NewServer(options).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unix sockets allow 107")));
  options = FastOptions();
  options.watchdog_interval = absl::ZeroDuration();
  EXPECT_THAT(NewServer(options).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("watchdog_interval")));
}

}  // namespace
}  // namespace deviceshare::agent
