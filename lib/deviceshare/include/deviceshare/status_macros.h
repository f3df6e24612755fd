// File: status_macros.h
//
// Early-return helpers for absl::Status and absl::StatusOr. Debian's abseil
// (20220623) ships neither ABSL_RETURN_IF_ERROR nor ABSL_ASSIGN_OR_RETURN, so
// deviceshare defines its own, as Ray and leveldb do.
#ifndef DEVICESHARE_STATUS_MACROS_H_
#define DEVICESHARE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function when it is not OK.
#define DS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status ds_status_ = (expr);      \
    if (!ds_status_.ok()) return ds_status_; \
  } while (false)

#define DS_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define DS_STATUS_MACROS_CONCAT_(x, y) DS_STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `expr` (an absl::StatusOr<T>); on error returns its status, else
// moves the value into `lhs`, which may be a declaration (`auto x`).
#define DS_ASSIGN_OR_RETURN(lhs, expr)                                        \
  DS_ASSIGN_OR_RETURN_IMPL_(DS_STATUS_MACROS_CONCAT_(ds_statusor_, __LINE__), \
                            lhs, expr)

#define DS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

#endif  // DEVICESHARE_STATUS_MACROS_H_
