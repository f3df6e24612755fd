// File: format_goldens.h
//
// The example strings of docs/reference/formats.md, spelt once for every
// codec test. format_goldens_test.cc checks that each still occurs verbatim
// in formats.md, so a golden cannot drift from the reference.
#ifndef DEVICESHARE_TESTS_FORMAT_GOLDENS_H_
#define DEVICESHARE_TESTS_FORMAT_GOLDENS_H_

namespace deviceshare::testing::goldens {

// Volcano `volcano.sh/node-vgpu-register`.
inline constexpr char kVolcanoRegister[] =
    "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,81920,"
    "NVIDIA-NVIDIA A100-SXM4-80GB,true,mig:";
// Volcano `volcano.sh/vgpu-ids-new`: two containers.
inline constexpr char kVolcanoAllocation[] =
    "GPU-a,NVIDIA,3000,50:GPU-b,NVIDIA,3000,50:;GPU-c,NVIDIA,2000,0:";
// Volcano `volcano.sh/vgpu-ids-new` with a MIG instance id.
inline constexpr char kVolcanoMigAllocation[] =
    "GPU-a[group2-3],NVIDIA,10240,0:";

// HAMi `hami.io/node-nvidia-register`, JSON.
inline constexpr char kHamiRegisterJson[] =
    R"([{"id":"GPU-0","index":0,"count":10,"devmem":81920,"devcore":100,)"
    R"("type":"NVIDIA-NVIDIA A100-SXM4-80GB","numa":0,"mode":"hami-core",)"
    R"("health":true}])";
// The MIG members of a JSON register entry (a fragment, not a document).
inline constexpr char kHamiMigFragment[] =
    R"("mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":5120,)"
    R"("core":14,"sliceCount":1,"placements":[{"start":6,"size":1}]}])";
// HAMi `hami.io/node-nvidia-register`, legacy 7-field string.
inline constexpr char kHamiRegisterLegacy[] =
    "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,"
    "NVIDIA-Tesla V100-PCIE-32GB,0,true:";
// HAMi `hami.io/vgpu-devices-allocated`: two containers.
inline constexpr char kHamiAllocation[] =
    "GPU-aaa,NVIDIA,3000,50:;GPU-bbb,NVIDIA,4000,60:;";

inline constexpr const char* kAll[] = {
    kVolcanoRegister,  kVolcanoAllocation, kVolcanoMigAllocation,
    kHamiRegisterJson, kHamiMigFragment,   kHamiRegisterLegacy,
    kHamiAllocation,
};

}  // namespace deviceshare::testing::goldens

#endif  // DEVICESHARE_TESTS_FORMAT_GOLDENS_H_
