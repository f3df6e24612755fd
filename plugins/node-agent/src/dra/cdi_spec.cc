#include "dra/cdi_spec.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace deviceshare::agent {
namespace {

using nlohmann::json;

// The driver's control nodes every CUDA container needs besides its GPUs.
constexpr const char* kControlNodes[] = {"/dev/nvidiactl", "/dev/nvidia-uvm",
                                         "/dev/nvidia-uvm-tools"};

json MountJson(const Mount& mount) {
  json options = json::array();
  options.push_back(mount.read_only ? "ro" : "rw");
  for (const char* option : {"nosuid", "nodev", "bind"}) {
    options.push_back(option);
  }
  return {{"hostPath", mount.host_path},
          {"containerPath", mount.container_path},
          {"options", std::move(options)}};
}

}  // namespace

std::string CdiKind(const std::string& driver) {
  return absl::StrCat(driver, "/claim");
}

std::string CdiDeviceId(const std::string& driver, const std::string& name) {
  return absl::StrCat(CdiKind(driver), "=", name);
}

std::string CdiSpecPath(const std::string& cdi_dir, const std::string& driver,
                        const std::string& claim_uid) {
  return absl::StrCat(cdi_dir, "/", driver, "-claim-", claim_uid, ".json");
}

json CdiSpecJson(const std::string& driver,
                 const std::vector<CdiGpuDevice>& devices,
                 const ContainerEdits& claim_edits) {
  json device_list = json::array();
  for (const CdiGpuDevice& device : devices) {
    device_list.push_back(
        {{"name", device.name},
         {"containerEdits",
          {{"deviceNodes", json::array({{{"path", device.device_node}}})}}}});
  }
  json env = json::array();
  env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  for (const auto& [name, value] : claim_edits.env) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  json mounts = json::array();
  for (const Mount& mount : claim_edits.mounts)
    mounts.push_back(MountJson(mount));
  json nodes = json::array();
  for (const char* path : kControlNodes) nodes.push_back({{"path", path}});
  json edits = {{"env", std::move(env)}, {"deviceNodes", std::move(nodes)}};
  if (!mounts.empty()) edits["mounts"] = std::move(mounts);
  return {{"cdiVersion", kCdiVersion},
          {"kind", CdiKind(driver)},
          {"devices", std::move(device_list)},
          {"containerEdits", std::move(edits)}};
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& text) {
  const std::filesystem::path target(path);
  std::error_code error;
  std::filesystem::create_directories(target.parent_path(), error);
  if (error) {
    return absl::UnavailableError(absl::StrCat(
        "mkdir ", target.parent_path().string(), ": ", error.message()));
  }
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("write ", temp));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::UnavailableError(absl::StrCat("rename to ", path));
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::agent
