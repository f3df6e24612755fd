#include "deviceshare/mig/mig_backend.h"

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/backend/container_placement.h"
#include "deviceshare/policy/scoring.h"
#include "deviceshare/policy/stranded_capacity.h"
#include "deviceshare/status_macros.h"
#include "gpu_kinds.h"
#include "mig_dra_devices.h"

namespace deviceshare::mig {
namespace {

using internal::GpuKind;
using internal::GpuKinds;
using internal::LaidGroup;

// How GPUs rank for one container: a repartition destroys instances of an
// idle GPU, so it is the last resort; then the instance that strands the
// least beyond the ask (policy/stranded_capacity.h); then the GPU policy's
// score (0..100).
int OfferScore(MigAction action, int stranded_percent, int policy_score) {
  const int undisturbed = action == MigAction::kRepartition ? 0 : 1;
  return undisturbed * 1000000 +
         (100 - std::min(stranded_percent, 100)) * 1000 + policy_score;
}

struct Instance {
  int profile;  // index in the model; -1 when the catalog lacks the name
  int32_t start;
  uint32_t mask;
  std::string group;  // configMap mode: the knownMigGeometries group
};

// One GPU's MIG instances as one offer sees them.
struct GpuMigState {
  std::vector<Instance> in_use;  // by pods, and by the pod's own containers
  uint32_t in_use_mask = 0;
  std::vector<Instance> free_existing;  // on the hardware, not in use
  uint32_t existing_mask = 0;
  std::array<int32_t, 32> counts{};  // instances per profile, both kinds
  bool idle = false;                 // nothing in use
};

uint32_t MaskOf(const MigModel& model, const MigSlot& slot, int profile) {
  if (slot.size > 0) return slot.mask();
  if (profile < 0 || slot.start < 0) return 0;
  return model.profiles[profile].MaskAt(slot.start);
}

GpuMigState StateOf(const MigModel& model, const DeviceLedger& ledger,
                    absl::Span<const ContainerShare> pending) {
  GpuMigState state;
  auto add_in_use = [&](const ContainerShare& share) {
    if (!share.is_mig()) return;
    const int profile = model.ProfileIndex(share.mig.profile);
    const uint32_t mask = MaskOf(model, share.mig, profile);
    state.in_use.push_back(
        Instance{profile, share.mig.start, mask, share.mig.group});
    state.in_use_mask |= mask;
    if (profile >= 0) ++state.counts[profile];
  };
  ledger.ForEachShare(add_in_use);
  for (const ContainerShare& share : pending) add_in_use(share);
  state.idle = state.in_use.empty();
  // A hardware instance that overlaps one in use without being it was
  // destroyed by a repartition (this pod's or an earlier pod's, before the
  // node agent re-reported the hardware), and a repartition destroys every
  // unused instance: none of those reported is left then.
  for (const Instance& taken : state.in_use) {
    for (const MigSlot& slot : ledger.gpu().mig_instances) {
      const int profile = model.ProfileIndex(slot.profile);
      const uint32_t mask = MaskOf(model, slot, profile);
      if ((mask & taken.mask) != 0 &&
          (mask != taken.mask || profile != taken.profile)) {
        return state;
      }
    }
  }
  for (const MigSlot& slot : ledger.gpu().mig_instances) {
    const int profile = model.ProfileIndex(slot.profile);
    const uint32_t mask = MaskOf(model, slot, profile);
    if ((mask & state.in_use_mask) != 0) continue;
    state.free_existing.push_back(Instance{profile, slot.start, mask, ""});
    state.existing_mask |= mask;
    if (profile >= 0) ++state.counts[profile];
  }
  return state;
}

// Memory slices as "0-3,6" for verdicts.
std::string SliceList(uint32_t mask) {
  std::vector<std::string> runs;
  for (int s = 0; s < 32;) {
    if (((mask >> s) & 1u) == 0) {
      ++s;
      continue;
    }
    int end = s;
    while (end + 1 < 32 && ((mask >> (end + 1)) & 1u) != 0) ++end;
    runs.push_back(end == s ? absl::StrCat(s) : absl::StrCat(s, "-", end));
    s = end + 1;
  }
  return runs.empty() ? "none" : absl::StrJoin(runs, ",");
}

// The instance chosen for one container on one GPU.
struct Pick {
  int profile = -1;
  int32_t start = -1;
  MigAction action = MigAction::kCreate;
  std::string group;
  int32_t position = -1;
  int64_t memory_mib = 0;
};

// A failed pick: the code and, when explaining, the numbers.
struct Miss {
  ReasonCode code;
  std::string detail;
};

// `by_memory`: the configMap search, where only memory chooses the instance
// as both upstreams' knownMigGeometries searches do (Volcano mig.go findMatch
// and HAMi's before 2.8 compare the instance memory alone; the cores asked
// are charged, not matched). A container that asks no memory still wants the
// whole card: the largest instance.
MigDemand DemandOf(const ContainerRequest& container, const Gpu& gpu,
                   const GpuKind& kind, bool by_memory) {
  MigDemand demand;
  demand.profile = container.mig_profile;
  if (!container.mig_profile.empty()) return demand;
  demand.cores_percent = by_memory ? 0 : container.cores;
  if (container.memory_mib > 0) {
    demand.memory_mib = container.memory_mib;
  } else if (container.memory_percent > 0) {
    // HAMi takes a percentage of the registered memory (Totalmem); with the
    // built-in table, of what the largest instance can hold.
    const int64_t base = kind.registered && gpu.memory_mib > 0
                             ? gpu.memory_mib
                             : kind.largest_memory_mib;
    demand.memory_mib = base * container.memory_percent / 100;
  } else {
    demand.cores_percent = 100;  // the whole card: the largest profile
  }
  return demand;
}

// What Volcano writes for the container in its record (utils.go
// encodePodDevices takes the request, not the instance): the MiB asked, the
// percentage's share of the registered memory, or the whole registered
// memory; and the cores asked.
void SetAsked(const ContainerRequest& container, const Gpu& gpu,
              MigSlot& slot) {
  if (container.memory_mib > 0) {
    slot.asked_memory_mib = container.memory_mib;
  } else if (container.memory_percent > 0) {
    slot.asked_memory_mib = gpu.memory_mib * container.memory_percent / 100;
  } else {
    slot.asked_memory_mib = gpu.memory_mib;
  }
  slot.asked_cores = container.cores;
}

// A reservation read back on a GPU with registered profiles that names a
// profile or start the node no longer registers: HAMi restores reservations
// by their placement alone (occupiedMigPlacements), so the slices stay
// taken, charged as recorded, rather than the record being refused and the
// pod charged nothing.
bool HeldByPlacement(const GpuKind& kind, const MigSlot& slot) {
  return kind.registered && slot.group.empty() && slot.placed() &&
         slot.mask() != 0;
}

std::string DemandText(const MigDemand& demand) {
  if (!demand.profile.empty()) return absl::StrCat("profile=", demand.profile);
  return absl::StrFormat("memory=%dMiB cores=%d%%", demand.memory_mib,
                         demand.cores_percent);
}

class MigBackend final : public SharingBackend {
 public:
  MigBackend(const MigConfig& config, const MigCatalog& catalog)
      : configmap_(config.search == MigSearch::kConfigMap),
        kinds_(config, catalog) {}

  absl::string_view name() const override { return kBackendName; }
  SharingMode mode() const override { return kMode; }

  NodeFit Filter(const PodRequest& request, const NodeState& node,
                 const PlacementOptions& options) const override {
    return PlaceContainers(
        request, node, kMode, *options.gpu_policy,
        [&](const ContainerRequest& container, int32_t index, size_t position,
            PendingShares& pending) {
          return Offer(container, index, node.ledger(position), pending,
                       options);
        },
        options.explain, /*several_per_gpu=*/true);
  }

  int Score(const NodeState& node, const PodAllocation& placement,
            const PlacementOptions& options) const override {
    return NodeScoreOf(options, node, placement);
  }

  bool MayFit(const PodRequest& request, const NodeState& node) const override;

  // A MIG grant may charge more than the pod asks (a whole profile), so the
  // share bounds do not hold: the utilisation after a placement is at
  // least the node's now (it only grows) and at most 100.
  int ScoreUpperBound(const PodRequest& request, const NodeState& node,
                      const PlacementOptions& options) const override {
    auto now = [&] { return NodeUtilisationPercent(node); };
    auto full = [] { return 100; };
    return options.node_policy->ScoreBound(UtilisationRange{now, full});
  }
  int ShapeScoreBound(const PodRequest& request, const NodeShape& shape,
                      int utilisation_percent,
                      const PlacementOptions& options) const override {
    auto now = [&] { return utilisation_percent; };
    auto full = [] { return 100; };
    return options.node_policy->ScoreBound(UtilisationRange{now, full});
  }

  absl::Status Commit(const PodRequest& request,
                      const PodAllocation& allocation,
                      NodeState& node) const override;

  void Release(absl::string_view pod_uid, NodeState& node) const override {
    ReleaseShares(pod_uid, kMode, node);
  }

  ContainerEdits Edits(const ContainerAllocation& container,
                       const EditOptions& options) const override;

  absl::StatusOr<dra::GpuDevices> DraDevices(
      const Gpu& gpu, const dra::DeviceNaming& naming) const override {
    return internal::MigDraDevices(gpu, kinds_.Of(gpu), naming);
  }

 private:
  GpuOffer Offer(const ContainerRequest& container, int32_t index,
                 const DeviceLedger& ledger, PendingShares& pending,
                 const PlacementOptions& options) const;
  absl::StatusOr<Pick> PlacementPick(const GpuKind& kind,
                                     const GpuMigState& state,
                                     const MigDemand& demand, bool explain,
                                     Miss& miss) const;
  bool ConfigMapPick(const GpuKind& kind, const GpuMigState& state,
                     const MigDemand& demand, Pick& pick) const;
  // Fills a grant's slot from the catalog (size) or the geometry (profile
  // and start of a Volcano group-position id).
  absl::Status Resolve(const GpuKind& kind, const Gpu& gpu,
                       MigSlot& slot) const;
  // Raises a resolved grant's figures to its instance's: the geometry's
  // memory for a group position, else the profile's, and the profile's
  // compute share.
  void ChargeInstance(const GpuKind& kind, DeviceGrant& grant) const;

  const bool configmap_;
  GpuKinds kinds_;
};

GpuOffer MigBackend::Offer(const ContainerRequest& container, int32_t index,
                           const DeviceLedger& ledger, PendingShares& pending,
                           const PlacementOptions& options) const {
  GpuOffer offer;
  const Gpu& gpu = ledger.gpu();
  auto miss = [&](ReasonCode code, std::string detail) {
    offer.verdict =
        GpuVerdict{code, gpu.index, options.explain ? std::move(detail) : ""};
    return offer;
  };
  const GpuKind& kind = kinds_.Of(gpu);
  if (kind.model == nullptr) {
    std::string detail;
    if (options.explain) {
      detail = kind.model_status.ok()
                   ? absl::StrFormat("model=\"%s\" has no MIG profile table",
                                     gpu.model)
                   : std::string(kind.model_status.message());
    }
    return miss(kMigUnknownModel, std::move(detail));
  }
  const MigModel& model = *kind.model;
  // Volcano's configmap search and HAMi's registered catalogue
  // (selectMigCandidate) both choose an instance by memory alone; the
  // instance's own share of the SMs is what the pod then gets.
  const MigDemand demand =
      DemandOf(container, gpu, kind, configmap_ || kind.registered);
  const GpuMigState state = StateOf(model, ledger, pending);
  Pick pick;
  if (configmap_) {
    if (!kind.groups_status.ok()) {
      return miss(kMigNoProfile, std::string(kind.groups_status.message()));
    }
    if (!ConfigMapPick(kind, state, demand, pick)) {
      return miss(kMigNoSlot,
                  options.explain
                      ? absl::StrFormat("no free instance of a usable "
                                        "knownMigGeometries group holds %s "
                                        "(slices in use %s)",
                                        DemandText(demand),
                                        SliceList(state.in_use_mask))
                      : "");
    }
  } else {
    Miss failure{ReasonCode::kFits, ""};
    absl::StatusOr<Pick> placed =
        PlacementPick(kind, state, demand, options.explain, failure);
    if (!placed.ok()) return miss(failure.code, std::move(failure.detail));
    pick = *std::move(placed);
  }
  const MigProfile& profile = model.profiles[pick.profile];
  ContainerShare& share = offer.share;
  share.container_index = index;
  share.is_init = container.is_init;
  share.memory_mib = pick.memory_mib;
  share.cores = kind.CoresOf(pick.profile);
  share.mig = MigSlot{profile.name, pick.start, profile.memory_slices,
                      pick.group, pick.position};
  if (configmap_) SetAsked(container, gpu, share.mig);
  offer.mig_action = pick.action;
  pending.push_back(share);
  offer.verdict = options.explain
                      ? ledger.CheckPod(pending)
                      : GpuVerdict{ledger.CheckPodCode(pending), gpu.index, ""};
  if (offer.verdict.fits()) {
    offer.score = OfferScore(
        pick.action,
        GrantStrandedPercent(container, share.memory_mib, share.cores, gpu),
        options.gpu_policy->GpuScore(ledger, ChargeOf(pending)));
  }
  pending.pop_back();
  return offer;
}

absl::StatusOr<Pick> MigBackend::PlacementPick(const GpuKind& kind,
                                               const GpuMigState& state,
                                               const MigDemand& demand,
                                               bool explain, Miss& miss) const {
  const MigModel& model = *kind.model;
  const SlotSearch& search = *kind.search;
  static const std::vector<int> kNone;
  const std::vector<int>& allowed = kind.allowed ? *kind.allowed : kNone;
  const uint32_t candidates = search.Candidates(demand, allowed);
  if (candidates == 0 || (kind.allowed && kind.allowed->empty())) {
    miss.code = kMigNoProfile;
    if (explain) {
      miss.detail =
          absl::StrFormat("no %sprofile of %s holds %s (largest %dMiB)",
                          kind.allowed ? "allowed " : "", model.name,
                          DemandText(demand), kind.largest_memory_mib);
    }
    return absl::NotFoundError("no profile");
  }
  Pick pick;
  // A free instance the hardware already has: smallest profile, then the
  // highest start, as the search itself prefers.
  for (const Instance& existing : state.free_existing) {
    if (existing.profile < 0 || ((candidates >> existing.profile) & 1u) == 0) {
      continue;
    }
    if (pick.profile < 0 || existing.profile < pick.profile ||
        (existing.profile == pick.profile && existing.start > pick.start)) {
      pick.profile = existing.profile;
      pick.start = existing.start;
      pick.action = MigAction::kReuse;
    }
  }
  // A new instance in free slices wins over reusing a larger one: a 9 GiB
  // pod should not take an existing 3g when a 1g can be made beside it.
  std::optional<SlotChoice> choice = search.Choose(
      state.in_use_mask | state.existing_mask, state.counts, demand, allowed);
  if (choice && (pick.profile < 0 || choice->profile < pick.profile)) {
    pick.profile = choice->profile;
    pick.start = choice->start;
    pick.action = MigAction::kCreate;
  }
  if (pick.profile < 0 && state.idle && !state.free_existing.empty()) {
    choice = search.Choose(0, {}, demand, allowed);
    if (choice) {
      pick.profile = choice->profile;
      pick.start = choice->start;
      pick.action = MigAction::kRepartition;
    }
  }
  if (pick.profile < 0) {
    miss.code = kMigNoSlot;
    if (explain) {
      miss.detail = absl::StrFormat(
          "no free legal start for %s on %s (slices in use %s, other "
          "instances %s)",
          DemandText(demand), model.name, SliceList(state.in_use_mask),
          SliceList(state.existing_mask));
    }
    return absl::NotFoundError("no slot");
  }
  pick.memory_mib = model.profiles[pick.profile].memory_mib;
  return pick;
}

bool MigBackend::ConfigMapPick(const GpuKind& kind, const GpuMigState& state,
                               const MigDemand& demand, Pick& pick) const {
  const MigModel& model = *kind.model;
  const int32_t compute =
      kind.search->RequiredComputeSlices(demand.cores_percent);
  const int named =
      demand.profile.empty() ? -1 : model.ProfileIndex(demand.profile);
  if (!demand.profile.empty() && named < 0) return false;
  for (const LaidGroup& group : kind.groups) {
    // Instances in use fix the geometry: only the group they were given
    // from, and only groups that contain them all.
    bool usable = true;
    for (const Instance& used : state.in_use) {
      usable = usable && (used.group.empty() || used.group == group.name) &&
               std::any_of(group.slots.begin(), group.slots.end(),
                           [&](const GeometrySlot& slot) {
                             return slot.profile == used.profile &&
                                    slot.start == used.start;
                           });
    }
    if (!usable) continue;
    const GeometrySlot* best = nullptr;
    MigAction best_action = MigAction::kCreate;
    for (const GeometrySlot& slot : group.slots) {
      const MigProfile& profile = model.profiles[slot.profile];
      const uint32_t mask = profile.MaskAt(slot.start);
      if ((mask & state.in_use_mask) != 0) continue;
      if (named >= 0 ? slot.profile != named
                     : (slot.memory_mib < demand.memory_mib ||
                        profile.compute_slices < compute)) {
        continue;
      }
      MigAction action = MigAction::kCreate;
      for (const Instance& existing : state.free_existing) {
        if ((existing.mask & mask) == 0) continue;
        if (existing.mask == mask && existing.profile == slot.profile) {
          action = MigAction::kReuse;
        } else {
          action = state.idle ? MigAction::kRepartition : MigAction::kNone;
          break;
        }
      }
      if (action == MigAction::kNone) continue;  // would destroy a neighbour
      if (best == nullptr || slot.memory_mib < best->memory_mib) {
        best = &slot;
        best_action = action;
      }
    }
    if (best == nullptr) continue;
    pick.profile = best->profile;
    pick.start = best->start;
    pick.action = best_action;
    pick.group = group.name;
    pick.position = best->position;
    pick.memory_mib = best->memory_mib;
    return true;
  }
  return false;
}

bool MigBackend::MayFit(const PodRequest& request,
                        const NodeState& node) const {
  if (!request.AcceptsMode(kMode)) return false;
  int32_t open = 0;
  for (size_t pos = 0; pos < node.gpu_count(); ++pos) {
    const DeviceLedger& ledger = node.ledger(pos);
    const Gpu& gpu = ledger.gpu();
    if (EligibilityCode(request, gpu, kMode) != ReasonCode::kFits ||
        ledger.free_slots() < 1) {
      continue;
    }
    const GpuKind& kind = kinds_.Of(gpu);
    if (kind.model == nullptr) continue;
    // A GPU holds at most one instance per free memory slice, and a
    // container may take several of its instances (PlaceContainers'
    // several_per_gpu).
    const int32_t free_slices = std::popcount(
        static_cast<uint32_t>(kind.model->FullMask() & ~ledger.mig_mask()));
    open += std::min(ledger.free_slots(), free_slices);
  }
  for (const ContainerRequest& container : request.containers) {
    if (container.gpu_count > open) return false;
  }
  return true;
}

absl::Status MigBackend::Resolve(const GpuKind& kind, const Gpu& gpu,
                                 MigSlot& slot) const {
  const MigModel& model = *kind.model;
  if (slot.profile.empty() && !slot.group.empty()) {
    for (const LaidGroup& group : kind.groups) {
      if (group.name != slot.group) continue;
      if (slot.position < 0 ||
          static_cast<size_t>(slot.position) >= group.slots.size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "gpu %s: group %s has no position %d (it has %d instances)",
            gpu.uuid, slot.group, slot.position, group.slots.size()));
      }
      const GeometrySlot& laid = group.slots[slot.position];
      slot.profile = model.profiles[laid.profile].name;
      slot.start = laid.start;
      break;
    }
    if (slot.profile.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "gpu %s: knownMigGeometries has no group %s for model \"%s\"",
          gpu.uuid, slot.group, gpu.model));
    }
  }
  const MigProfile* profile = model.FindProfile(slot.profile);
  if (profile == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpu %s: \"%s\" is not a MIG profile of %s", gpu.uuid,
                        slot.profile, model.name));
  }
  if (!profile->IsLegalStart(slot.start)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpu %s: %d is not a legal start of %s on %s", gpu.uuid,
                        slot.start, profile->name, model.name));
  }
  if (slot.size != 0 && slot.size != profile->memory_slices) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpu %s: %s covers %d memory slices, not %d", gpu.uuid,
                        profile->name, profile->memory_slices, slot.size));
  }
  // The ledger and the per-profile caps compare names: store the catalog's.
  slot.profile = profile->name;
  slot.size = profile->memory_slices;
  return absl::OkStatus();
}

void MigBackend::ChargeInstance(const GpuKind& kind, DeviceGrant& grant) const {
  const MigModel& model = *kind.model;
  const MigProfile& profile = *model.FindProfile(grant.mig.profile);
  int64_t memory_mib = profile.memory_mib;
  for (const LaidGroup& group : kind.groups) {
    if (group.name != grant.mig.group) continue;
    if (grant.mig.position >= 0 &&
        static_cast<size_t>(grant.mig.position) < group.slots.size()) {
      memory_mib = group.slots[grant.mig.position].memory_mib;
    }
    break;
  }
  grant.memory_mib = std::max(grant.memory_mib, memory_mib);
  grant.cores = kind.CoresOf(model.ProfileIndex(profile.name));
}

absl::Status MigBackend::Commit(const PodRequest& request,
                                const PodAllocation& allocation,
                                NodeState& node) const {
  PodAllocation resolved = allocation;
  for (ContainerAllocation& container : resolved.containers) {
    for (DeviceGrant& grant : container.devices) {
      std::optional<size_t> position = node.FindGpu(grant.uuid);
      if (!position || grant.mode != kMode) continue;
      // A record that names the GPU but no instance on it (HAMi's record
      // without its MIG allocations): fail closed, as HAMi does.
      if (grant.mig.profile.empty() && grant.mig.group.empty() &&
          !grant.mig.placed()) {
        grant.mig.holds_gpu = true;
        continue;
      }
      const Gpu& gpu = node.inventory().gpus[*position];
      const GpuKind& kind = kinds_.Of(gpu);
      const bool placeable =
          kind.model != nullptr && Resolve(kind, gpu, grant.mig).ok();
      if (!placeable) {
        if (HeldByPlacement(kind, grant.mig)) continue;
        // A record naming an instance this GPU's catalog cannot place (a
        // model without a table, an unknown profile, group or position, an
        // illegal start or size): the instance is somewhere on the GPU, so
        // the record holds the whole GPU until its pod leaves, as HAMi
        // fails closed a GPU whose MIG record it cannot match. Refusing
        // the record would charge the pod nothing and hand its slices out
        // again. A pod refused there is told so (DeviceLedger::CheckPod).
        grant.mig = MigSlot{};
        grant.mig.holds_gpu = true;
        continue;
      }
      // The instance is held whole whatever a record read back says:
      // Volcano's carries the request's figures (`GPU-a[group1-0],NVIDIA,
      // 10,0:`), and a slot charged less would look free to the next pod.
      ChargeInstance(kind, grant);
      // Per-profile caps (a +me profile: one instance per GPU).
      const int profile = kind.model->ProfileIndex(grant.mig.profile);
      int32_t count = 0;
      node.ledger(*position).ForEachShare([&](const ContainerShare& share) {
        if (share.is_mig() && share.mig.profile == grant.mig.profile) ++count;
      });
      for (const ContainerAllocation& c : resolved.containers) {
        for (const DeviceGrant& g : c.devices) {
          if (g.uuid == grant.uuid && g.mig.profile == grant.mig.profile) {
            ++count;
          }
        }
      }
      if (count > kind.model->profiles[profile].max_instances) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "pod %s: gpu %s would hold %d instances of %s, at most %d",
            allocation.pod_key, gpu.uuid, count, grant.mig.profile,
            kind.model->profiles[profile].max_instances));
      }
    }
  }
  return CommitShares(request, resolved, kMode, node);
}

ContainerEdits MigBackend::Edits(const ContainerAllocation& container,
                                 const EditOptions& options) const {
  ContainerEdits edits;
  std::vector<std::string> ids;
  for (const DeviceGrant& grant : container.devices) {
    if (!grant.mig_uuid.empty()) {
      ids.push_back(grant.mig_uuid);
    } else if (grant.gpu_instance_id >= 0 && grant.compute_instance_id >= 0) {
      // The NVIDIA container toolkit also takes MIG-<gpu uuid>/<gi>/<ci>.
      ids.push_back(absl::StrFormat("MIG-%s/%d/%d", grant.uuid,
                                    grant.gpu_instance_id,
                                    grant.compute_instance_id));
    }
  }
  // Until the node agent has created every instance, there is nothing the
  // container could be pointed at; it fills the runtime ids first.
  if (ids.empty() || ids.size() != container.devices.size()) return edits;
  edits.device_ids = ids;
  edits.env.emplace_back("NVIDIA_VISIBLE_DEVICES", absl::StrJoin(ids, ","));
  return edits;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SharingBackend>> NewMigBackend(
    const Config& config, const MigCatalog& catalog) {
  DS_ASSIGN_OR_RETURN(MigConfig mig, ReadMigConfig(config));
  return std::make_unique<MigBackend>(mig, catalog);
}

absl::Status RegisterMigBackend(BackendRegistry& registry) {
  return registry.Register(
      kBackendName,
      [](const Config& config) {
        return NewMigBackend(config, MigCatalog::Builtin());
      },
      MigConfigExtension());
}

}  // namespace deviceshare::mig
