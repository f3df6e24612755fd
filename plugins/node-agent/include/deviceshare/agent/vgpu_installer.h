// File: deviceshare/agent/vgpu_installer.h
//
// Puts deviceshare's libvgpu.so where the hami-core backend's container
// edits point: <hook-path>/libvgpu.so (bind-mounted read-only into each
// container at /usr/local/vgpu/libvgpu.so) and <hook-path>/ld.so.preload
// (mounted at /etc/ld.so.preload, naming that path), so every container of
// a hami-core share loads our enforcer in place of HAMi-core's.
//
// Both files are replaced by rename(2), never rewritten in place: running
// containers keep the inode they mounted, new containers get the new one,
// and a crash mid-install leaves the old file whole.
#ifndef DEVICESHARE_AGENT_VGPU_INSTALLER_H_
#define DEVICESHARE_AGENT_VGPU_INSTALLER_H_

#include <string>

#include "absl/status/status.h"

namespace deviceshare::agent {

// Where containers see the library (the backend's mount target).
inline constexpr char kContainerVgpuLibrary[] = "/usr/local/vgpu/libvgpu.so";

// Copies `library` (an ELF shared object) to <hook_path>/libvgpu.so and
// writes <hook_path>/ld.so.preload. Creates `hook_path` if needed. Errors
// name the file and the reason; an unchanged install writes nothing.
absl::Status InstallVgpuLibrary(const std::string& library,
                                const std::string& hook_path);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_VGPU_INSTALLER_H_
