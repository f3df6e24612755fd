#include "deviceshare/backend/container_edits.h"

namespace deviceshare {

ContainerEdits GpulessContainerEdits(bool overwrite_env) {
  ContainerEdits edits;
  if (overwrite_env) edits.env.emplace_back("NVIDIA_VISIBLE_DEVICES", "none");
  return edits;
}

}  // namespace deviceshare
