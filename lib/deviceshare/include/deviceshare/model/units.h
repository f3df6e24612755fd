// File: model/units.h
//
// Parsers for the quantities that GPU-sharing pods and configs carry. All
// results are integers in a named unit (MiB, milli, percent): deviceshare
// never stores a fractional amount as a double.
//
// Every parser takes the name of the field it is parsing and returns an
// InvalidArgument status that names the field and the offending value, e.g.
// `volcano.sh/vgpu-memory: "12x" is not a quantity`.
#ifndef DEVICESHARE_MODEL_UNITS_H_
#define DEVICESHARE_MODEL_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

// Parses a Kubernetes resource.Quantity ("2", "500m", "1.5", "1Gi", "3e3",
// "128974848") into thousandths of its unit: "500m" -> 500, "2" -> 2000,
// "1Ki" -> 1024000. Rejects negative values, overflow of int64 and quantities
// finer than one milli.
absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text,
                                           absl::string_view field);

// Parses a quantity that must be a whole, non-negative number ("3", "3000",
// "2k"): GPU counts, MiB amounts, percentages.
absl::StatusOr<int64_t> ParseWholeQuantity(absl::string_view text,
                                           absl::string_view field);

// Parses a Kubernetes memory quantity (bytes: "512Mi", "1Gi", "1G", "1048576")
// and rounds it up to whole MiB.
absl::StatusOr<int64_t> ParseMemoryQuantityMiB(absl::string_view text,
                                               absl::string_view field);

// Parses a HAMi-core style size: "1024m" / "1024M" (MiB), "3g" / "3G" (GiB),
// "512k" / "512K" (KiB, rounded up to MiB), or a plain number of bytes
// (rounded up to MiB). Returns MiB.
absl::StatusOr<int64_t> ParseSizeMiB(absl::string_view text,
                                     absl::string_view field);

// Parses a percentage 0..100.
absl::StatusOr<int32_t> ParsePercent(absl::string_view text,
                                     absl::string_view field);

// Formats MiB the way HAMi-core's CUDA_DEVICE_MEMORY_LIMIT wants it: "4096m".
std::string FormatMiBLimit(int64_t mib);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_UNITS_H_
