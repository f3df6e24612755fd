// File: codec/dialect_modes.h
//
// The sharing-mode names the two dialects' wire formats carry
// (registration `mode` fields, `*/vgpu-mode` annotations) where a format
// gives one meaning: a MIG grant or MIG resource is mode "mig", a record or
// entry without a mode is the default mode. They are the names the
// built-in backends register under; the codecs name them because the wire
// does, and decide nothing by them.
#ifndef DEVICESHARE_CODEC_DIALECT_MODES_H_
#define DEVICESHARE_CODEC_DIALECT_MODES_H_

#include "deviceshare/model/sharing_mode.h"

namespace deviceshare::dialect {

inline constexpr SharingMode kMigMode("mig");
inline constexpr SharingMode kMpsMode("mps");

}  // namespace deviceshare::dialect

#endif  // DEVICESHARE_CODEC_DIALECT_MODES_H_
