// File: dra/cel.h
//
// The subset of CEL that Kubernetes DRA (resource.k8s.io/v1, 1.34) device
// selectors use, compiled once and evaluated against one device at a time.
// Self-contained: no CEL library, no exceptions.
//
// An expression sees one variable, `device`:
//   device.driver                     string
//   device.attributes["<domain>"].<n> the attribute: int, bool, string or
//                                     version (a semver value)
//   device.capacity["<domain>"].<n>   the capacity's value, a quantity
//   device.allowMultipleAllocations   bool
// Attribute and capacity keys of a Device are "<name>" (the driver's own
// domain) or "<domain>/<name>". An unknown domain is an empty map; reading a
// name a domain lacks is an evaluation error ("no such key: <name>"), as in
// Kubernetes, where it aborts scheduling; `"<name>" in <map>` tests presence.
//
// Supported: string literals ("..." / '...', escapes \" \' \\ \n \t \r), int
// literals (decimal, 0x hex, unary minus), true/false; == != < <= > >= (int,
// string, bool; == and != also on quantity and semver); && || ! ( ) and
// `key in map`; quantity("<literal>") with compareTo / isGreaterThan /
// isLessThan / asInteger; semver("<literal>") with compareTo / isGreaterThan /
// isLessThan / major / minor / patch; on strings startsWith, endsWith,
// contains, lowerAscii, size() and size(s). // comments are allowed.
// Anything else (macros, matches, other variables, arithmetic, lists, maps,
// floats, ?:) fails to compile with "unsupported: ..." and its position;
// syntax errors name the position ("line 1, column 7").
//
// Semantics kept from CEL: && and || are commutative over errors (false &&
// <error> is false whichever side errs, likewise true || <error>); == across
// different runtime types is false. A result that is not a bool is an
// evaluation error ("expression did not evaluate to a bool").
//
// Errors: Compile returns kInvalidArgument; Matches returns
// kFailedPrecondition for evaluation errors.
//
// Thread safety: a CelProgram is immutable; Matches may run on many threads
// at once. CelCache is thread-safe.
#ifndef DEVICESHARE_DRA_CEL_H_
#define DEVICESHARE_DRA_CEL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

namespace cel_internal {
struct Ast;
}  // namespace cel_internal

// The device an expression sees. `device` must outlive the call.
struct CelDevice {
  std::string_view driver;
  const Device* device = nullptr;
};

class CelProgram {
 public:
  static absl::StatusOr<CelProgram> Compile(std::string_view expression);

  // Whether the device satisfies the expression; an error where evaluation
  // fails (a missing attribute, a type mismatch, a non-bool result).
  absl::StatusOr<bool> Matches(const CelDevice& device) const;

  const std::string& expression() const;

 private:
  explicit CelProgram(std::shared_ptr<const cel_internal::Ast> ast);

  // Shared: copies of a program are cheap and the tree is never changed.
  std::shared_ptr<const cel_internal::Ast> ast_;
};

// Compiled programs by expression text, each compiled once; compile errors
// are remembered too, so a bad selector is not recompiled per device. Grows
// with the distinct expressions seen (DeviceClasses and claims), never
// shrinks.
class CelCache {
 public:
  absl::StatusOr<std::shared_ptr<const CelProgram>> Get(
      std::string_view expression);
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string,
                      absl::StatusOr<std::shared_ptr<const CelProgram>>>
      programs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_CEL_H_
