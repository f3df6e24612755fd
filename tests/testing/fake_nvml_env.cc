#include "testing/fake_nvml_env.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace deviceshare::testing {
namespace {

std::optional<std::string> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

void RestoreEnv(const char* name, const std::optional<std::string>& value) {
  if (value) {
    setenv(name, value->c_str(), 1);
  } else {
    unsetenv(name);
  }
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".writing";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << "cannot write " << tmp;
  }
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0) << "rename " << path;
}

FakeNvmlEnv::FakeNvmlEnv(const std::string& inventory) {
  std::string pattern = ::testing::TempDir() + "fake-nvml-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern;
  }
  dir_ = pattern;
  inventory_path_ = dir_ + "/inventory.yaml";
  state_path_ = dir_ + "/mig-state.json";
  sysfs_root_ = dir_ + "/sys";
  std::filesystem::create_directories(sysfs_root_ + "/bus/pci/devices");
  WriteInventory(inventory);
  old_inventory_ = GetEnv("FAKE_NVML_INVENTORY");
  old_state_ = GetEnv("FAKE_NVML_STATE");
  setenv("FAKE_NVML_INVENTORY", inventory_path_.c_str(), 1);
  setenv("FAKE_NVML_STATE", state_path_.c_str(), 1);
}

FakeNvmlEnv::~FakeNvmlEnv() {
  RestoreEnv("FAKE_NVML_INVENTORY", old_inventory_);
  RestoreEnv("FAKE_NVML_STATE", old_state_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void FakeNvmlEnv::WriteInventory(const std::string& inventory) {
  WriteFileAtomically(inventory_path_, inventory);
}

void FakeNvmlEnv::SetNuma(const std::string& sysfs_name,
                          const std::string& text) {
  const std::string device = sysfs_root_ + "/bus/pci/devices/" + sysfs_name;
  std::filesystem::create_directories(device);
  WriteFileAtomically(device + "/numa_node", text + "\n");
}

agent::NvmlSourceOptions FakeNvmlEnv::Options(const std::string& library,
                                              const Clock* clock) const {
  agent::NvmlSourceOptions options;
  options.library_path = library;
  options.sysfs_root = sysfs_root_;
  options.clock = clock;
  return options;
}

}  // namespace deviceshare::testing
