// The pod identity readers the extender uses, from kube/object_fields.h
// (the node agent uses them too).
#ifndef DEVICESHARE_EXTENDER_POD_FIELDS_H_
#define DEVICESHARE_EXTENDER_POD_FIELDS_H_

#include "deviceshare/kube/object_fields.h"

namespace deviceshare::extender {

using ::deviceshare::kube::BoundNode;
using ::deviceshare::kube::PodKey;
using ::deviceshare::kube::PodUid;
using ::deviceshare::kube::Text;

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_POD_FIELDS_H_
