#include "deviceshare/model/mig_slot.h"

namespace deviceshare {

const char* MigActionName(MigAction action) {
  switch (action) {
    case MigAction::kNone:
      return "";
    case MigAction::kReuse:
      return "reuse";
    case MigAction::kCreate:
      return "create";
    case MigAction::kRepartition:
      return "repartition";
  }
  return "";
}

}  // namespace deviceshare
