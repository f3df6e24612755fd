// File: dra/slice_decode.h
//
// DecodeResourceSlice: the inverse of ResourceSliceToJson (dra/slice_json.h)
// -- a resource.k8s.io/v1 ResourceSlice's JSON, as the API server returns
// it, read back into the value types of dra/resource_slice.h -- and
// DecodeQuantity, the quantity reader the other DRA decoders share.
//
// Quantities become integer counts of their unit, rounded up ("1500m" ->
// 2); a quantity written with a binary suffix (Ki..Ei) is kBinary, any other
// kDecimal. So FormatQuantity -> DecodeQuantity gives back the same value
// and format, except for a kBinary value that is 0 or not a multiple of
// 1024, which FormatQuantity writes as plain bytes (read back as kDecimal).
//
// Decoding is strict about what it uses and ignores the rest (unknown
// fields are skipped, for forward compatibility): every error is
// InvalidArgument and names the field path and the value, e.g.
// `spec.devices[2].capacity[memory].value: "x" is not a quantity`. The
// decoder does not check the API's limits (dra/slice_limits.h does) and
// never throws, whatever the input.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_DRA_SLICE_DECODE_H_
#define DEVICESHARE_DRA_SLICE_DECODE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "deviceshare/dra/resource_slice.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

// An amount of a capacity or counter, and how it was (or is to be) written.
struct CapacityAmount {
  int64_t value = 0;
  QuantityFormat format = QuantityFormat::kDecimal;

  bool operator==(const CapacityAmount& other) const = default;
};

// A quantity: a JSON string ("80Gi", "1500m") or a non-negative integer.
// Errors name `path`: `<path>: "x" is not a quantity`.
absl::StatusOr<CapacityAmount> DecodeQuantity(const nlohmann::json& value,
                                              const std::string& path);

// A ResourceSlice and what of its node selection ResourceSlice has no field
// for: spec.allNodes and spec.nodeSelector (kept whole; null when absent).
struct DecodedSlice {
  ResourceSlice slice;
  bool all_nodes = false;
  nlohmann::json node_selector;

  bool operator==(const DecodedSlice& other) const = default;
};

absl::StatusOr<DecodedSlice> DecodeResourceSlice(const nlohmann::json& slice);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SLICE_DECODE_H_
