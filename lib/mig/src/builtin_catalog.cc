// The built-in MIG tables.
//
// Sources (the project's research note is docs/reference/mig-mps-nvml.md
// §1; "lgip" = `nvidia-smi mig -lgip` output):
//   - Placements of every 8-slice part: NVML GetGpuInstancePossiblePlacements
//     measured on an H100-80GB, identical lists in the MIG user guide
//     (A100-40GB) and the H100 NVL lgip. 1-slice profiles start at 0..6, the
//     2-slice 1g at 0,2,4,6, 2g at 0,2,4, 3g (4 slices) at 0,4, 4g and 7g
//     at 0. A30: 1g at 0..3, 2g at 0,2, 4g at 0 (lgipp of an A30).
//   - MiB: NVML memorySizeMB where measured (H100-80GB SXM). Elsewhere lgip
//     prints GiB with two decimals; values that are multiples of 0.25 GiB
//     convert exactly (16.00 GiB = 16384 MiB). The others are marked
//     "derived": the one multiple of 64 MiB inside the rounding interval
//     (every exactly known MIG size is a multiple of 64 MiB), so they may be
//     off by a few MiB.
//   - Per-profile memory depends on the driver (A100-40GB 2-slice profiles
//     print 9.75 GiB on some drivers and 9.62 on others; B200 1g 22.00 vs
//     20.50). A catalog file with what NVML reports on the node
//     (MigCatalog::FromText) is the authority; these tables are defaults.
//
// Left out, because a number placement needs is missing:
//   - B200 (0x2901) and GB200 (0x2941): 3g/4g/7g MiB and SMs not found in
//     any real NVML output (only go-nvml mocks, which the note shows to be
//     wrong for H100); 1g MiB differs by driver.
//   - GH200 144G (0x2348): 3g/4g/7g MiB not found.
//   - RTX PRO 6000 Blackwell (0x2BB5): the 4g and several variants lack MiB.
//   - H20 (0x2329), PG506 (0x20B6), 0x233D, H800 (0x2322, 0x2324) and H800
//     NVL (0x233A): mig-parted lists their profile names, but no MiB/SM
//     output was found for them (H20 has 78 SMs, so the H100 SM counts
//     would be wrong).
//   - A30 2g.12gb+me is included (id 6, lgip on driver 535); older drivers
//     do not offer it.
#include "builtin_catalog.h"

#include <initializer_list>

namespace deviceshare::mig::internal {
namespace {

MigProfile P(const char* name, int32_t id, int32_t memory_slices,
             int32_t compute_slices, int64_t memory_mib, int32_t sm_count,
             std::initializer_list<int> starts, int32_t max_instances) {
  MigProfile p;
  p.name = name;
  p.id = id;
  p.memory_slices = memory_slices;
  p.compute_slices = compute_slices;
  p.memory_mib = memory_mib;
  p.sm_count = sm_count;
  for (int s : starts) p.legal_starts |= 1u << s;
  p.max_instances = max_instances;
  return p;
}

MigModel M(const char* name, std::initializer_list<uint32_t> pci_ids,
           std::initializer_list<const char*> model_names,
           int32_t memory_slices, int32_t compute_slices,
           std::initializer_list<MigProfile> profiles) {
  MigModel m;
  m.name = name;
  m.pci_device_ids.assign(pci_ids.begin(), pci_ids.end());
  for (const char* n : model_names) m.model_names.emplace_back(n);
  m.memory_slices = memory_slices;
  m.compute_slices = compute_slices;
  m.profiles.assign(profiles.begin(), profiles.end());
  return m;
}

// Legal starts of the 8-slice parts (A100, H100, H200).
const std::initializer_list<int> k1Slice = {0, 1, 2, 3, 4, 5, 6};
const std::initializer_list<int> k2Slice1g = {0, 2, 4, 6};
const std::initializer_list<int> k2Slice = {0, 2, 4};
const std::initializer_list<int> k4Slice3g = {0, 4};
const std::initializer_list<int> kAt0 = {0};

}  // namespace

// A data table, one entry per GPU model, and therefore longer than a function.
std::vector<MigModel> BuiltinModels() {
  std::vector<MigModel> models;

  // A30 24GB [lgip + lgipp, driver 535.183.01]: 1g 5952 MiB and 2g 11968
  // MiB exact (nvidia-smi MIG device table); 4g 23.44 GiB -> 24000 derived
  // (another driver prints 23.50). SMs 14/28/56.
  models.push_back(M("A30-24GB", {0x20B7}, {"A30"}, 4, 4,
                     {
                         P("1g.6gb", 14, 1, 1, 5952, 14, {0, 1, 2, 3}, 4),
                         P("1g.6gb+me", 21, 1, 1, 5952, 14, {0, 1, 2, 3}, 1),
                         P("2g.12gb", 5, 2, 2, 11968, 28, {0, 2}, 2),
                         P("2g.12gb+me", 6, 2, 2, 11968, 28, {0, 2}, 1),
                         P("4g.24gb", 0, 4, 4, 24000, 56, kAt0, 1),
                     }));

  // A100 40GB [lgip of an A100-PCIE-40GB; MIG guide]: 4.75 GiB = 4864
  // exact, 39.50 = 40448 exact, 9.75 = 9984 exact, 19.62 -> 20096 derived.
  // 108 SMs, MIG exposes 98.
  models.push_back(M("A100-40GB", {0x20B0, 0x20B1, 0x20F1, 0x20F6},
                     {"A100-SXM4-40GB", "A100-PCIE-40GB", "A100 40GB PCIe"}, 8,
                     7,
                     {
                         P("1g.5gb", 19, 1, 1, 4864, 14, k1Slice, 7),
                         P("1g.5gb+me", 20, 1, 1, 4864, 14, k1Slice, 1),
                         P("1g.10gb", 15, 2, 1, 9984, 14, k2Slice1g, 4),
                         P("2g.10gb", 14, 2, 2, 9984, 28, k2Slice, 3),
                         P("3g.20gb", 9, 4, 3, 20096, 42, k4Slice3g, 2),
                         P("4g.20gb", 5, 4, 4, 20096, 56, kAt0, 1),
                         P("7g.40gb", 0, 8, 7, 40448, 98, kAt0, 1),
                     }));

  // A100 / A800 80GB [lgip, public doc example]: 9.50 GiB = 9728, 19.50 =
  // 19968, 39.25 = 40192, 79.00 = 80896, all exact (HAMi's legacy 7g.79gb
  // says 80896 too).
  models.push_back(M("A100-80GB", {0x20B2, 0x20B5, 0x20F3, 0x20F5},
                     {"A100-SXM4-80GB", "A100 80GB PCIe", "A100-PCIE-80GB"}, 8,
                     7,
                     {
                         P("1g.10gb", 19, 1, 1, 9728, 14, k1Slice, 7),
                         P("1g.10gb+me", 20, 1, 1, 9728, 14, k1Slice, 1),
                         P("1g.20gb", 15, 2, 1, 19968, 14, k2Slice1g, 4),
                         P("2g.20gb", 14, 2, 2, 19968, 28, k2Slice, 3),
                         P("3g.40gb", 9, 4, 3, 40192, 42, k4Slice3g, 2),
                         P("4g.40gb", 5, 4, 4, 40192, 56, kAt0, 1),
                         P("7g.80gb", 0, 8, 7, 80896, 98, kAt0, 1),
                     }));

  // H100 80GB SXM5 (0x2330) [measured: NVML memorySizeMB and
  // multiprocessorCount, driver 580.159.04].
  models.push_back(M("H100-80GB", {0x2330},
                     {"H100 80GB HBM3", "H100-SXM5-80GB"}, 8, 7,
                     {
                         P("1g.10gb", 19, 1, 1, 9984, 16, k1Slice, 7),
                         P("1g.10gb+me", 20, 1, 1, 9984, 16, k1Slice, 1),
                         P("1g.20gb", 15, 2, 1, 20096, 26, k2Slice1g, 4),
                         P("2g.20gb", 14, 2, 2, 20096, 32, k2Slice, 3),
                         P("3g.40gb", 9, 4, 3, 40448, 60, k4Slice3g, 2),
                         P("4g.40gb", 5, 4, 4, 40448, 64, kAt0, 1),
                         P("7g.80gb", 0, 8, 7, 81152, 132, kAt0, 1),
                     }));

  // H100 PCIe 80GB (0x2331): same 81559 MiB board, same profile names
  // (mig-parted and HAMi treat it as one family with the SXM part), so the
  // SXM MiB are assumed. It has 114 SMs, not 132: SM counts unknown (0).
  models.push_back(M("H100-PCIe-80GB", {0x2331},
                     {"H100 PCIe", "H100-PCIE-80GB"}, 8, 7,
                     {
                         P("1g.10gb", 19, 1, 1, 9984, 0, k1Slice, 7),
                         P("1g.10gb+me", 20, 1, 1, 9984, 0, k1Slice, 1),
                         P("1g.20gb", 15, 2, 1, 20096, 0, k2Slice1g, 4),
                         P("2g.20gb", 14, 2, 2, 20096, 0, k2Slice, 3),
                         P("3g.40gb", 9, 4, 3, 40448, 0, k4Slice3g, 2),
                         P("4g.40gb", 5, 4, 4, 40448, 0, kAt0, 1),
                         P("7g.80gb", 0, 8, 7, 81152, 0, kAt0, 1),
                     }));

  // H100 NVL 94GB (0x2321) [lgip, NVIDIA/gpu-operator#900]: 10.75 GiB =
  // 11008 exact; 21.62 -> 22144, 46.38 -> 47488, 93.12 -> 95360 derived.
  models.push_back(M("H100-NVL-94GB", {0x2321}, {"H100 NVL"}, 8, 7,
                     {
                         P("1g.12gb", 19, 1, 1, 11008, 16, k1Slice, 7),
                         P("1g.12gb+me", 20, 1, 1, 11008, 16, k1Slice, 1),
                         P("1g.24gb", 15, 2, 1, 22144, 26, k2Slice1g, 4),
                         P("2g.24gb", 14, 2, 2, 22144, 32, k2Slice, 3),
                         P("3g.47gb", 9, 4, 3, 47488, 60, k4Slice3g, 2),
                         P("4g.47gb", 5, 4, 4, 47488, 64, kAt0, 1),
                         P("7g.94gb", 0, 8, 7, 95360, 132, kAt0, 1),
                     }));

  // H100 96GB HBM3 on GH200 [lgip of a GH200]: 11.00, 23.00, 46.50, 93.00
  // GiB, all exact. Ids: 0x2342 (mig-parted), 0x2345 (Linux's nvgrace-gpu
  // driver: "GH200 480GB", the name nvidia-smi prints).
  models.push_back(M("H100-96GB", {0x2342, 0x2345}, {"GH200 480GB"}, 8, 7,
                     {
                         P("1g.12gb", 19, 1, 1, 11264, 16, k1Slice, 7),
                         P("1g.12gb+me", 20, 1, 1, 11264, 16, k1Slice, 1),
                         P("1g.24gb", 15, 2, 1, 23552, 26, k2Slice1g, 4),
                         P("2g.24gb", 14, 2, 2, 23552, 32, k2Slice, 3),
                         P("3g.48gb", 9, 4, 3, 47616, 60, k4Slice3g, 2),
                         P("4g.48gb", 5, 4, 4, 47616, 64, kAt0, 1),
                         P("7g.96gb", 0, 8, 7, 95232, 132, kAt0, 1),
                     }));

  // H200 141GB SXM (0x2335) and H200 NVL (0x233B) [lgip,
  // NVIDIA/mig-parted#120]: 16.00, 32.25, 69.50, 139.75 GiB, all exact.
  models.push_back(M("H200-141GB", {0x2335, 0x233B}, {"H200", "H200 NVL"}, 8, 7,
                     {
                         P("1g.18gb", 19, 1, 1, 16384, 16, k1Slice, 7),
                         P("1g.18gb+me", 20, 1, 1, 16384, 16, k1Slice, 1),
                         P("1g.35gb", 15, 2, 1, 33024, 26, k2Slice1g, 4),
                         P("2g.35gb", 14, 2, 2, 33024, 32, k2Slice, 3),
                         P("3g.71gb", 9, 4, 3, 71168, 60, k4Slice3g, 2),
                         P("4g.71gb", 5, 4, 4, 71168, 64, kAt0, 1),
                         P("7g.141gb", 0, 8, 7, 143104, 132, kAt0, 1),
                     }));
  return models;
}

}  // namespace deviceshare::mig::internal
