// File: model/sharing_mode.h
//
// SharingMode: a way of sharing one physical GPU, by name: "hami-core",
// "mig", "mps", the strings Volcano and HAMi use in `volcano.sh/vgpu-mode`,
// `nvidia.com/vgpu-mode` and the registration's `mode` field. The set is
// open: each backend defines its own mode beside it (its SharingBackend's
// mode()), and a GPU, a pod or a grant names one. The core names only the
// mode a GPU runs when nothing says otherwise.
//
// A value type of 16 bytes (the name inline), cheap to copy and compare.
#ifndef DEVICESHARE_MODEL_SHARING_MODE_H_
#define DEVICESHARE_MODEL_SHARING_MODE_H_

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

class SharingMode {
 public:
  static constexpr size_t kMaxLength = 15;

  // The empty mode: no backend serves it.
  constexpr SharingMode() = default;
  // REQUIRES: IsModeName(name). For the constants backends define.
  constexpr explicit SharingMode(absl::string_view name) {
    for (size_t i = 0; i < name.size() && i < kMaxLength; ++i) {
      name_[i] = name[i];
    }
  }

  absl::string_view name() const { return absl::string_view(name_.data()); }
  bool empty() const { return name_[0] == '\0'; }

  // Two word compares: every GPU of every filtered node compares its mode.
  friend bool operator==(const SharingMode& a, const SharingMode& b) {
    uint64_t x[2];
    uint64_t y[2];
    std::memcpy(x, a.name_.data(), sizeof(x));
    std::memcpy(y, b.name_.data(), sizeof(y));
    return x[0] == y[0] && x[1] == y[1];
  }
  friend auto operator<=>(const SharingMode&, const SharingMode&) = default;

 private:
  std::array<char, kMaxLength + 1> name_{};
  static_assert(sizeof(name_) == 2 * sizeof(uint64_t));
};

// The mode of a GPU whose registration names none, and of the grants read
// back from a record that carries none: both dialects' default.
inline constexpr SharingMode kDefaultSharingMode("hami-core");

// Lower-case letters, digits and '-', 1 to 15 characters, starting with a
// letter.
bool IsModeName(absl::string_view text);

// mode.name(): "hami-core", "mig", "mps", ...
inline absl::string_view SharingModeName(const SharingMode& mode) {
  return mode.name();
}

// A mode name (exact, lower case). Whether a backend serves it is the
// backend registry's to say. `field` names the source of the text for the
// error message.
absl::StatusOr<SharingMode> ParseSharingMode(absl::string_view text,
                                             absl::string_view field);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_SHARING_MODE_H_
