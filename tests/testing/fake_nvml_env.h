// File: testing/fake_nvml_env.h
//
// FakeNvmlEnv: a world for the fake NVML library (tests/fake_nvml) that one
// test owns: a temporary directory with the inventory file, the MIG state
// file and a sysfs tree for NUMA nodes, and the environment variables
// FAKE_NVML_INVENTORY / FAKE_NVML_STATE pointing at them (restored when it
// goes away). Set it up before OpenNvmlSource, which reads them at
// nvmlInit.
//
// Thread safety: none; one per test.
#ifndef DEVICESHARE_TESTS_TESTING_FAKE_NVML_ENV_H_
#define DEVICESHARE_TESTS_TESTING_FAKE_NVML_ENV_H_

#include <optional>
#include <string>

#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/clock.h"

namespace deviceshare::testing {

class FakeNvmlEnv {
 public:
  // Writes `inventory` (YAML or JSON, fake_nvml/fake_world.h's format).
  explicit FakeNvmlEnv(const std::string& inventory);
  ~FakeNvmlEnv();
  FakeNvmlEnv(const FakeNvmlEnv&) = delete;
  FakeNvmlEnv& operator=(const FakeNvmlEnv&) = delete;

  // Replaces the inventory atomically (a new inode, so the fake always
  // sees the change, however fast the test rewrites it).
  void WriteInventory(const std::string& inventory);

  // <sysfs>/bus/pci/devices/<sysfs_name>/numa_node := `text`.
  void SetNuma(const std::string& sysfs_name, const std::string& text);

  // Options that load `library` (DEVICESHARE_FAKE_NVML_LIB) with this
  // sysfs tree and `clock`.
  agent::NvmlSourceOptions Options(const std::string& library,
                                   const Clock* clock = nullptr) const;

  const std::string& dir() const { return dir_; }
  const std::string& inventory_path() const { return inventory_path_; }
  const std::string& state_path() const { return state_path_; }
  const std::string& sysfs_root() const { return sysfs_root_; }

 private:
  std::string dir_;
  std::string inventory_path_;
  std::string state_path_;
  std::string sysfs_root_;
  std::optional<std::string> old_inventory_;
  std::optional<std::string> old_state_;
};

// Writes `text` to `path` through a temporary file and rename().
void WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_NVML_ENV_H_
