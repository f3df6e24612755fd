// File: dra/slice_json.h
//
// A ResourceSlice (dra/resource_slice.h) as the JSON body the API server
// takes for resource.k8s.io/v1 (apiVersion, kind, metadata.name, spec), and
// the quantity strings its values become.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_DRA_SLICE_JSON_H_
#define DEVICESHARE_DRA_SLICE_JSON_H_

#include <cstdint>
#include <string>

#include "deviceshare/dra/resource_slice.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

inline constexpr char kResourceApiVersion[] = "resource.k8s.io/v1";

// kDecimal: "100". kBinary: the largest of Ei..Ki that divides the value
// ("80Gi", "9984Mi"), else plain bytes. A value that does not divide stays
// exact, so a parser reads back the same integer.
std::string FormatQuantity(int64_t value, QuantityFormat format);

nlohmann::json ResourceSliceToJson(const ResourceSlice& slice);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SLICE_JSON_H_
