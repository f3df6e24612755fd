#include "deviceshare/agent/dra_claim_preparer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/status_macros.h"
#include "dra/cdi_spec.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {

using nlohmann::json;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr char kClaimContainer[] = "claim";

// What one GPU of a claim gets: every share of it summed.
struct GpuShare {
  const Gpu* gpu = nullptr;
  int64_t memory_bytes = 0;
  int64_t cores = 0;
};

json ResultToJson(const ClaimPrepareResult& result) {
  json devices = json::array();
  for (const PreparedDevice& device : result.devices) {
    devices.push_back({{"requestNames", device.request_names},
                       {"pool", device.pool},
                       {"device", device.device},
                       {"cdiDeviceIds", device.cdi_device_ids},
                       {"shareId", device.share_id}});
  }
  return {{"devices", std::move(devices)}};
}

absl::StatusOr<ClaimPrepareResult> ResultFromJson(const json& entry) {
  ClaimPrepareResult result;
  try {
    for (const json& device : entry.at("devices")) {
      PreparedDevice out;
      out.request_names =
          device.at("requestNames").get<std::vector<std::string>>();
      out.pool = device.at("pool").get<std::string>();
      out.device = device.at("device").get<std::string>();
      out.cdi_device_ids =
          device.at("cdiDeviceIds").get<std::vector<std::string>>();
      out.share_id = device.at("shareId").get<std::string>();
      result.devices.push_back(std::move(out));
    }
  } catch (const json::exception& error) {
    return absl::DataLossError(error.what());
  }
  return result;
}

// The amount of `capacity` a result consumes: what the scheduler wrote, or
// all of it for a device allocated whole.
absl::StatusOr<int64_t> Consumed(const dra::AllocatedDevice& result,
                                 const dra::Device& device,
                                 const std::string& capacity,
                                 const std::string& path) {
  auto cap = device.capacity.find(capacity);
  if (cap == device.capacity.end()) return 0;
  if (result.share_id.empty()) return cap->second.value;
  auto it = result.consumed.find(capacity);
  // The allocator writes every capacity of the device; a missing one means
  // the policy's default.
  const int64_t amount =
      it != result.consumed.end()
          ? it->second
          : (cap->second.policy.has_value() ? cap->second.policy->default_value
                                            : cap->second.value);
  if (amount > cap->second.value) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".consumedCapacity[", capacity, "]: ", amount,
        " is more than device ", device.name, "'s ", cap->second.value));
  }
  return amount;
}

}  // namespace

DraClaimPreparer::DraClaimPreparer(DraPreparerOptions options,
                                   kube::ApiClient* api,
                                   const BackendSet* backends)
    : options_(std::move(options)), api_(api), backends_(backends) {}

void DraClaimPreparer::SetDevices(const NodeSlices& slices,
                                  const std::vector<Gpu>& gpus) {
  absl::MutexLock lock(&mu_);
  slices_ = slices;
  devices_.clear();
  for (const dra::ResourceSlice& slice : slices_.slices) {
    for (const dra::Device& device : slice.devices) {
      auto uuid = device.attributes.find("uuid");
      auto parent = device.attributes.find("parentUUID");
      const std::string& gpu_uuid =
          parent != device.attributes.end() ? parent->second.text
          : uuid != device.attributes.end() ? uuid->second.text
                                            : device.name;
      for (const Gpu& gpu : gpus) {
        if (gpu.uuid == gpu_uuid) devices_[device.name] = {&device, gpu};
      }
    }
  }
}

std::string DraClaimPreparer::JournalPath(const std::string& uid) const {
  return absl::StrCat(options_.state_dir, "/dra-claims/", uid, ".json");
}

std::string DraClaimPreparer::CacheDir(const std::string& uid) const {
  return absl::StrCat(options_.edits.hook_path, "/containers/", uid, "_",
                      kClaimContainer);
}

std::map<std::string, ClaimPrepareResult> DraClaimPreparer::Prepare(
    const std::vector<ClaimRef>& claims) {
  std::map<std::string, ClaimPrepareResult> out;
  absl::MutexLock lock(&mu_);
  for (const ClaimRef& ref : claims) {
    absl::StatusOr<ClaimPrepareResult> result = PrepareOne(ref);
    if (result.ok()) {
      out[ref.uid] = *std::move(result);
    } else {
      spdlog::warn("prepare claim {}/{} ({}): {}", ref.ns, ref.name, ref.uid,
                   std::string(result.status().message()));
      out[ref.uid].error = absl::StrCat("claim ", ref.ns, "/", ref.name, ": ",
                                        std::string(result.status().message()));
    }
  }
  return out;
}

absl::StatusOr<ClaimPrepareResult> DraClaimPreparer::PrepareOne(
    const ClaimRef& ref) {
  if (ref.uid.empty() || ref.uid.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("uid \"", ref.uid, "\" is not a claim uid"));
  }
  if (std::ifstream journal(JournalPath(ref.uid)); journal) {
    std::stringstream text;
    text << journal.rdbuf();
    json entry = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    absl::StatusOr<ClaimPrepareResult> done = ResultFromJson(entry);
    if (done.ok()) return done;
    spdlog::warn("journal of claim {} unreadable, preparing again: {}", ref.uid,
                 std::string(done.status().message()));
  }
  DS_ASSIGN_OR_RETURN(json object,
                      api_->Get(kube::ResourceClaimPath(ref.ns, ref.name)));
  DS_ASSIGN_OR_RETURN(dra::AllocatedClaim claim,
                      dra::DecodeAllocatedClaim(object));
  if (claim.uid != ref.uid) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the API server has uid ", claim.uid, ", kubelet asked for ", ref.uid));
  }
  std::map<int32_t, GpuShare> shares;  // by GPU index: the container's order
  ClaimPrepareResult result;
  for (size_t i = 0; i < claim.results.size(); ++i) {
    const dra::AllocatedDevice& r = claim.results[i];
    if (r.driver != options_.driver || r.pool != options_.node_name) continue;
    const std::string path =
        absl::StrCat("status.allocation.devices.results[", i, "]");
    auto it = devices_.find(r.device);
    if (it == devices_.end()) {
      return absl::NotFoundError(absl::StrCat(
          path, ".device: \"", r.device, "\" is not published by this node"));
    }
    const dra::Device& device = *it->second.device;
    if (!device.consumes_counters.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          path, ".device: \"", r.device,
          "\" is a MIG partition; this agent prepares MIG only through the "
          "device plugin so far"));
    }
    GpuShare& share = shares[it->second.gpu.index];
    share.gpu = &it->second.gpu;
    DS_ASSIGN_OR_RETURN(int64_t memory, Consumed(r, device, "memory", path));
    DS_ASSIGN_OR_RETURN(int64_t cores, Consumed(r, device, "cores", path));
    share.memory_bytes += memory;
    share.cores += cores;
    PreparedDevice prepared{{r.request}, r.pool, r.device, {}, r.share_id};
    prepared.cdi_device_ids.push_back(CdiDeviceId(
        options_.driver, absl::StrCat(ref.uid, "-gpu-", share.gpu->index)));
    result.devices.push_back(std::move(prepared));
  }
  if (shares.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "none of its ", claim.results.size(), " results is a device of ",
        options_.driver, " on pool ", options_.node_name));
  }
  ContainerAllocation container;
  container.name = kClaimContainer;
  std::vector<CdiGpuDevice> cdi_devices;
  const SharingMode mode = shares.begin()->second.gpu->mode;
  for (const auto& [index, share] : shares) {
    if (share.gpu->mode != mode) {
      return absl::InvalidArgumentError(
          absl::StrCat("its GPUs run different modes (", mode.name(), ", ",
                       share.gpu->mode.name(), ")"));
    }
    if (share.memory_bytes > share.gpu->memory_mib * kMiB ||
        share.cores > share.gpu->core_capacity) {
      return absl::InvalidArgumentError(
          absl::StrCat("its shares of GPU ", share.gpu->uuid, " add up to ",
                       share.memory_bytes, " bytes and ", share.cores,
                       " % cores, more than the GPU has"));
    }
    DeviceGrant grant;
    grant.uuid = share.gpu->uuid;
    grant.gpu_index = index;
    grant.mode = mode;
    grant.memory_mib = (share.memory_bytes + kMiB - 1) / kMiB;
    grant.cores = static_cast<int32_t>(share.cores);
    container.devices.push_back(grant);
    cdi_devices.push_back({absl::StrCat(ref.uid, "-gpu-", index),
                           absl::StrCat("/dev/nvidia", index)});
  }
  const SharingBackend* backend = backends_->ForMode(mode);
  if (backend == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("mode ", mode.name(), " is not enabled on this node"));
  }
  EditOptions edit_options = options_.edits;
  edit_options.pod_uid = ref.uid;
  edit_options.container_name = kClaimContainer;
  const ContainerEdits edits = backend->Edits(container, edit_options);
  std::error_code error;
  std::filesystem::create_directories(CacheDir(ref.uid), error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("mkdir ", CacheDir(ref.uid), ": ", error.message()));
  }
  DS_RETURN_IF_ERROR(WriteFileAtomically(
      CdiSpecPath(options_.cdi_dir, options_.driver, ref.uid),
      CdiSpecJson(options_.driver, cdi_devices, edits).dump(2)));
  DS_RETURN_IF_ERROR(
      WriteFileAtomically(JournalPath(ref.uid), ResultToJson(result).dump()));
  return result;
}

std::map<std::string, std::string> DraClaimPreparer::Unprepare(
    const std::vector<ClaimRef>& claims) {
  std::map<std::string, std::string> out;
  absl::MutexLock lock(&mu_);
  for (const ClaimRef& ref : claims) {
    std::string& error = out[ref.uid];
    if (ref.uid.empty() || ref.uid.find('/') != std::string::npos) {
      error = absl::StrCat("uid \"", ref.uid, "\" is not a claim uid");
      continue;
    }
    std::error_code code;
    std::filesystem::remove(
        CdiSpecPath(options_.cdi_dir, options_.driver, ref.uid), code);
    std::filesystem::remove_all(CacheDir(ref.uid), code);
    // The journal goes last: until it is gone, a repeat finds work to do.
    std::filesystem::remove(JournalPath(ref.uid), code);
    if (code) error = absl::StrCat("claim ", ref.uid, ": ", code.message());
  }
  return out;
}

}  // namespace deviceshare::agent
