#include <utility>

#include "absl/status/status.h"
#include "deviceshare/dra/cel.h"
#include "deviceshare/status_macros.h"
#include "dra/cel_ast.h"
#include "dra/cel_eval.h"
#include "dra/cel_parser.h"

namespace deviceshare::dra {

CelProgram::CelProgram(std::shared_ptr<const cel_internal::Ast> ast)
    : ast_(std::move(ast)) {}

absl::StatusOr<CelProgram> CelProgram::Compile(std::string_view expression) {
  DS_ASSIGN_OR_RETURN(cel_internal::Ast ast,
                      cel_internal::Parse(absl::string_view(
                          expression.data(), expression.size())));
  return CelProgram(std::make_shared<const cel_internal::Ast>(std::move(ast)));
}

absl::StatusOr<bool> CelProgram::Matches(const CelDevice& device) const {
  DS_ASSIGN_OR_RETURN(cel_internal::Value value,
                      cel_internal::Evaluate(*ast_, device));
  if (value.type != cel_internal::CelType::kBool) {
    return absl::FailedPreconditionError(
        "expression did not evaluate to a bool");
  }
  return value.number != 0;
}

const std::string& CelProgram::expression() const { return ast_->expression; }

absl::StatusOr<std::shared_ptr<const CelProgram>> CelCache::Get(
    std::string_view expression) {
  {
    absl::MutexLock lock(&mu_);
    auto it =
        programs_.find(absl::string_view(expression.data(), expression.size()));
    if (it != programs_.end()) return it->second;
  }
  // Compiled outside the lock; when two threads race, the first stored wins
  // and both get the same program.
  absl::StatusOr<std::shared_ptr<const CelProgram>> compiled;
  absl::StatusOr<CelProgram> program = CelProgram::Compile(expression);
  if (program.ok()) {
    compiled = std::make_shared<const CelProgram>(*std::move(program));
  } else {
    compiled = program.status();
  }
  absl::MutexLock lock(&mu_);
  return programs_.try_emplace(std::string(expression), std::move(compiled))
      .first->second;
}

size_t CelCache::size() const {
  absl::MutexLock lock(&mu_);
  return programs_.size();
}

}  // namespace deviceshare::dra
