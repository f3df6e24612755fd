// File: dra_objects.h
//
// deviceshare_upsert_object / deviceshare_remove_object: DRA objects
// (resource.k8s.io/v1 DeviceClass, node-local ResourceSlice,
// ResourceClaim) decoded by the core's dra/ decoders and fed to the
// Scheduler as events, as the extender's DRA feed does. A ResourceSlice
// must name its node (spec.nodeName): only node-local devices are
// scheduled.
#ifndef DEVICESHARE_CAPI_DRA_OBJECTS_H_
#define DEVICESHARE_CAPI_DRA_OBJECTS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::capi {

// One object, JSON or YAML; another kind is InvalidArgument naming it.
absl::Status UpsertObject(Scheduler& scheduler, absl::string_view text);

// `kind`: DeviceClass, ResourceSlice or ResourceClaim; `name`: the
// object's name, "namespace/name" for a claim. Idempotent.
absl::Status RemoveObject(Scheduler& scheduler, absl::string_view kind,
                          absl::string_view name);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_DRA_OBJECTS_H_
