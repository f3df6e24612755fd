#include "deviceshare/agent/dra_claim_preparer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/kube/events.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/status_macros.h"
#include "dra/cdi_spec.h"  // CdiGpuDevice, declared in the header
#include "metrics/agent_metrics.h"
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

PreparedDevice Prepared(const dra::AllocatedDevice& result,
                        std::string cdi_id) {
  return PreparedDevice{{result.request},
                        result.pool,
                        result.device,
                        {std::move(cdi_id)},
                        result.share_id};
}

// A MIG partition's slot from its published device: the profile and start
// attributes, the memory slices it consumes.
absl::StatusOr<MigSlot> SlotOf(const dra::Device& device,
                               const std::string& path) {
  auto profile = device.attributes.find("profile");
  auto start = device.attributes.find("placementStart");
  if (profile == device.attributes.end() || start == device.attributes.end()) {
    return absl::InternalError(absl::StrCat(path, ".device: \"", device.name,
                                            "\" has no MIG placement"));
  }
  int32_t size = 0;
  for (const dra::CounterConsumption& use : device.consumes_counters) {
    for (const auto& [name, counter] : use.counters) {
      if (absl::StartsWith(name, "memory-slice-")) ++size;
    }
  }
  return MigSlot{profile->second.text,
                 static_cast<int32_t>(start->second.int_value), size, "", -1};
}

}  // namespace

DraClaimPreparer::DraClaimPreparer(DraPreparerOptions options,
                                   kube::ApiClient* api,
                                   const BackendSet* backends)
    : options_(std::move(options)),
      api_(api),
      backends_(backends),
      realizer_(options_.mig_control != nullptr
                    ? std::make_unique<MigRealizer>(options_.mig_control)
                    : nullptr) {}

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
      metrics::AgentMetrics::Default().CountRefusal(
          metrics::kDraApi, options_.driver, result.status());
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
  if (std::optional<json> entry = ReadJournal(ref.uid); entry.has_value()) {
    absl::StatusOr<ClaimPrepareResult> done = ResultFromJson(*entry);
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
  DS_RETURN_IF_ERROR(CheckSignature(object, claim));
  DS_ASSIGN_OR_RETURN(std::vector<OurResult> ours, OursOf(claim));
  const bool partitions =
      !ours.front().published->device->consumes_counters.empty();
  for (const OurResult& r : ours) {
    if (r.published->device->consumes_counters.empty() == partitions) {
      return absl::InvalidArgumentError(
          "it mixes MIG partitions with shared GPUs");
    }
  }
  return partitions ? PrepareMig(ref, ours) : PrepareShares(ref, ours);
}

absl::Status DraClaimPreparer::CheckSignature(
    const json& object, const dra::AllocatedClaim& claim) {
  if (options_.record_keys == nullptr) return absl::OkStatus();
  const trust::RecordCheck check = trust::CheckClaimAllocation(
      *options_.record_keys->Keys(), PodAnnotationMap(object), claim,
      options_.node_name);
  if (options_.record_policy.Accepts(check.verdict)) return absl::OkStatus();
  const std::string why =
      absl::StrCat("its allocation is ", trust::VerdictName(check.verdict),
                   ": ", check.reason);
  absl::Status refusal = absl::PermissionDeniedError(why);
  refusal.SetPayload(
      metrics::kRefusalReasonPayload,
      absl::Cord(absl::StrCat(trust::VerdictName(check.verdict), "_record")));
  const json consumers = object.contains("status")
                             ? object["status"].value("reservedFor", json())
                             : json();
  if (!consumers.is_array()) return refusal;
  for (const json& consumer : consumers) {
    if (!consumer.is_object() || consumer.value("resource", "") != "pods") {
      continue;
    }
    absl::Status posted = kube::PostPodEvent(
        *api_,
        kube::PodRef{claim.ns, consumer.value("name", ""),
                     consumer.value("uid", "")},
        "Warning", "AllocationRecordRefused",
        absl::StrCat("DRA driver ", options_.driver, " on ", options_.node_name,
                     " will not prepare ResourceClaim ", claim.ns, "/",
                     claim.name, ": ", why),
        "deviceshare-node-agent", absl::Now());
    if (!posted.ok()) {
      spdlog::warn("claim {}/{}: event not recorded: {}", claim.ns, claim.name,
                   posted.ToString());
    }
  }
  return refusal;
}

absl::StatusOr<std::vector<DraClaimPreparer::OurResult>>
DraClaimPreparer::OursOf(const dra::AllocatedClaim& claim) const {
  std::vector<OurResult> ours;
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
    ours.push_back(OurResult{path, &r, &it->second});
  }
  if (ours.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "none of its ", claim.results.size(), " results is a device of ",
        options_.driver, " on pool ", options_.node_name));
  }
  return ours;
}

absl::StatusOr<ClaimPrepareResult> DraClaimPreparer::PrepareShares(
    const ClaimRef& ref, const std::vector<OurResult>& ours) {
  std::map<int32_t, GpuShare> shares;  // by GPU index: the container's order
  ClaimPrepareResult result;
  for (const OurResult& r : ours) {
    const dra::Device& device = *r.published->device;
    GpuShare& share = shares[r.published->gpu.index];
    share.gpu = &r.published->gpu;
    DS_ASSIGN_OR_RETURN(int64_t memory,
                        Consumed(*r.result, device, "memory", r.path));
    DS_ASSIGN_OR_RETURN(int64_t cores,
                        Consumed(*r.result, device, "cores", r.path));
    share.memory_bytes += memory;
    share.cores += cores;
    result.devices.push_back(Prepared(
        *r.result,
        CdiDeviceId(options_.driver,
                    absl::StrCat(ref.uid, "-gpu-", share.gpu->index))));
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
  DS_RETURN_IF_ERROR(WriteClaim(ref, container, cdi_devices, result, {}));
  return result;
}

absl::StatusOr<ClaimPrepareResult> DraClaimPreparer::PrepareMig(
    const ClaimRef& ref, const std::vector<OurResult>& ours) {
  if (realizer_ == nullptr) {
    return absl::FailedPreconditionError(
        "it asks for MIG partitions, but this agent does not prepare them: "
        "MIG control (NVML) is not available, or the device plugin runs "
        "beside the DRA driver and owns the node's MIG instances");
  }
  ContainerAllocation container;
  container.name = kClaimContainer;
  std::vector<CdiGpuDevice> cdi_devices;
  std::vector<HeldMigJournal> held_here;
  ClaimPrepareResult result;
  for (size_t i = 0; i < ours.size(); ++i) {
    const OurResult& r = ours[i];
    const Gpu& gpu = r.published->gpu;
    DS_ASSIGN_OR_RETURN(MigSlot slot, SlotOf(*r.published->device, r.path));
    HeldMigSlot mine{{ref.uid, 0, static_cast<int32_t>(i)}, slot};
    std::vector<HeldMigSlot> held = HeldOn(gpu.uuid, ref.uid);
    held.push_back(mine);
    DS_ASSIGN_OR_RETURN(std::vector<RealizedMigSlot> realized,
                        realizer_->Realize(gpu.uuid, held));
    const MigInstanceInfo& instance = realized.back().instance;
    DeviceGrant grant;
    grant.uuid = gpu.uuid;
    grant.gpu_index = gpu.index;
    grant.mode = gpu.mode;
    grant.mig = slot;
    grant.mig_uuid = instance.mig_uuid;
    grant.gpu_instance_id = instance.gpu_instance_id;
    grant.compute_instance_id = instance.compute_instance_id;
    container.devices.push_back(grant);
    const std::string name = absl::StrCat(ref.uid, "-mig-", i);
    cdi_devices.push_back({name, absl::StrCat("/dev/nvidia", gpu.index)});
    result.devices.push_back(
        Prepared(*r.result, CdiDeviceId(options_.driver, name)));
    held_here.push_back({gpu.uuid, mine});
  }
  DS_RETURN_IF_ERROR(
      WriteClaim(ref, container, cdi_devices, result, held_here));
  return result;
}

absl::Status DraClaimPreparer::WriteClaim(
    const ClaimRef& ref, const ContainerAllocation& container,
    const std::vector<CdiGpuDevice>& cdi_devices,
    const ClaimPrepareResult& result, const std::vector<HeldMigJournal>& mig) {
  const SharingMode mode = container.devices.front().mode;
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
  json entry = ResultToJson(result);
  json held = json::array();
  for (const HeldMigJournal& h : mig) {
    held.push_back({{"gpu", h.gpu_uuid},
                    {"profile", h.slot.slot.profile},
                    {"start", h.slot.slot.start},
                    {"size", h.slot.slot.size},
                    {"device", h.slot.holder.device_index}});
  }
  entry["mig"] = std::move(held);
  DS_RETURN_IF_ERROR(WriteFileAtomically(JournalPath(ref.uid), entry.dump()));
  metrics::AgentMetrics::Default().CountAllocation(
      metrics::kDraApi, options_.driver, mode.name());
  return absl::OkStatus();
}

std::optional<json> DraClaimPreparer::ReadJournal(
    const std::string& uid) const {
  std::ifstream in(JournalPath(uid));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

std::vector<HeldMigSlot> DraClaimPreparer::HeldOn(
    const std::string& gpu_uuid, const std::string& except_uid) const {
  std::vector<HeldMigSlot> held;
  std::error_code error;
  const std::string dir = absl::StrCat(options_.state_dir, "/dra-claims");
  for (const auto& file : std::filesystem::directory_iterator(dir, error)) {
    const std::string uid = file.path().stem().string();
    if (uid == except_uid || file.path().extension() != ".json") continue;
    std::optional<json> entry = ReadJournal(uid);
    if (!entry.has_value() || !entry->is_object()) continue;
    for (const json& h : entry->value("mig", json::array())) {
      if (!h.is_object() || h.value("gpu", "") != gpu_uuid) continue;
      held.push_back(
          HeldMigSlot{{uid, 0, h.value("device", 0)},
                      MigSlot{h.value("profile", ""), h.value("start", -1),
                              h.value("size", 0), "", -1}});
    }
  }
  return held;
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
    std::set<std::string> mig_gpus;
    if (std::optional<json> entry = ReadJournal(ref.uid);
        entry.has_value() && entry->is_object()) {
      for (const json& h : entry->value("mig", json::array())) {
        if (h.is_object()) mig_gpus.insert(h.value("gpu", ""));
      }
    }
    std::error_code code;
    std::filesystem::remove(
        CdiSpecPath(options_.cdi_dir, options_.driver, ref.uid), code);
    std::filesystem::remove_all(CacheDir(ref.uid), code);
    // The journal goes last: until it is gone, a repeat finds work to do.
    std::filesystem::remove(JournalPath(ref.uid), code);
    if (code) error = absl::StrCat("claim ", ref.uid, ": ", code.message());
    // Instances no prepared claim holds any more go, on a GPU where no
    // claim holds one (the realizer's rule).
    for (const std::string& gpu : mig_gpus) {
      if (realizer_ == nullptr) break;
      absl::StatusOr<std::vector<MigInstanceInfo>> gone =
          realizer_->CleanupOrphans(gpu, HeldOn(gpu, ref.uid));
      if (!gone.ok()) {
        spdlog::warn("MIG cleanup on {}: {}", gpu, gone.status().ToString());
      }
    }
  }
  return out;
}

}  // namespace deviceshare::agent
