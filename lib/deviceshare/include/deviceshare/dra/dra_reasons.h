// File: dra/dra_reasons.h
//
// The reason codes of the DRA filter step (model/reason_code.h): why a
// pod's ResourceClaims cannot be served on a node.
//
// Thread safety: immutable constants.
#ifndef DEVICESHARE_DRA_DRA_REASONS_H_
#define DEVICESHARE_DRA_DRA_REASONS_H_

#include "deviceshare/model/reason_code.h"

namespace deviceshare::dra {
namespace reasons {
// clang-format off
// A claim is missing (a template's claim not created yet), cannot be read
// (an unknown DeviceClass, a selector outside the CEL subset), or has as
// many consumers as Kubernetes allows.
inline constexpr ReasonInfo kClaimNotReady{"ClaimNotReady", 22, true};
// A claim is allocated on another node.
inline constexpr ReasonInfo kClaimElsewhere{"ClaimElsewhere", 23, true};
// The node publishes no DRA device.
inline constexpr ReasonInfo kNoDraDevices{"NoDraDevices", 24, true};
// No allocation of the node's devices serves the claims now.
inline constexpr ReasonInfo kDevicesUnavailable{"DevicesUnavailable", 25, false};
// clang-format on
}  // namespace reasons

inline constexpr ReasonCode kClaimNotReady{reasons::kClaimNotReady};
inline constexpr ReasonCode kClaimElsewhere{reasons::kClaimElsewhere};
inline constexpr ReasonCode kNoDraDevices{reasons::kNoDraDevices};
inline constexpr ReasonCode kDevicesUnavailable{reasons::kDevicesUnavailable};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_DRA_REASONS_H_
