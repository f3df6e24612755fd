#include "packing_bound.h"

#include <glpk.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deviceshare::bench {
namespace {

constexpr int64_t kGpuMilli = 1000;

// A maximisation LP built row by row: columns are >= 0, rows are
// `= 0` or `<= limit`; the matrix is loaded once, at Solve.
class Lp {
 public:
  Lp() : problem_(glp_create_prob()) {
    glp_set_obj_dir(problem_, GLP_MAX);
    // GLPK's arrays are 1-based: index 0 is never read.
    rows_.push_back(0);
    columns_.push_back(0);
    values_.push_back(0);
  }
  ~Lp() { glp_delete_prob(problem_); }
  Lp(const Lp&) = delete;
  Lp& operator=(const Lp&) = delete;

  int AddColumn(double objective) {
    const int column = glp_add_cols(problem_, 1);
    glp_set_col_bnds(problem_, column, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(problem_, column, objective);
    return column;
  }
  int AddEqualToZero() {
    const int row = glp_add_rows(problem_, 1);
    glp_set_row_bnds(problem_, row, GLP_FX, 0.0, 0.0);
    return row;
  }
  int AddAtMost(double limit) {
    const int row = glp_add_rows(problem_, 1);
    glp_set_row_bnds(problem_, row, GLP_UP, 0.0, limit);
    return row;
  }
  void Set(int row, int column, double value) {
    rows_.push_back(row);
    columns_.push_back(column);
    values_.push_back(value);
  }

  absl::StatusOr<double> Maximum() {
    glp_load_matrix(problem_, static_cast<int>(values_.size()) - 1,
                    rows_.data(), columns_.data(), values_.data());
    glp_smcp options;
    glp_init_smcp(&options);
    options.msg_lev = GLP_MSG_OFF;
    options.presolve = GLP_ON;
    const int code = glp_simplex(problem_, &options);
    if (code != 0 || glp_get_status(problem_) != GLP_OPT) {
      return absl::InternalError(absl::StrCat(
          "GLPK did not solve the packing relaxation (glp_simplex returned ",
          code, ", status ", glp_get_status(problem_), ")"));
    }
    return glp_get_obj_val(problem_);
  }

 private:
  glp_prob* problem_;
  std::vector<int> rows_;
  std::vector<int> columns_;
  std::vector<double> values_;
};

bool IsShare(const PodGroup& group) {
  return group.gpu_count == 1 && group.gpu_milli < kGpuMilli;
}

int64_t GroupGpuMilli(const PodGroup& group) {
  return IsShare(group) ? group.gpu_milli : group.gpu_count * kGpuMilli;
}

absl::Status CheckPools(absl::Span<const NodePool> pools) {
  for (size_t i = 0; i < pools.size(); ++i) {
    const NodePool& pool = pools[i];
    for (const auto& [field, value] :
         {std::pair<const char*, int64_t>{"cpu_milli", pool.cpu_milli},
          {"memory_mib", pool.memory_mib},
          {"gpus", pool.gpus},
          {"nodes", pool.nodes}}) {
      if (value < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node pool ", i, ": ", field, " ", value, " is negative"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPods(absl::Span<const PodGroup> pods) {
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodGroup& group = pods[i];
    const std::string name = absl::StrCat("pod group ", i, ": ");
    if (group.cpu_milli < 0 || group.memory_mib < 0 || group.count < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "cpu_milli ", group.cpu_milli, ", memory_mib ",
          group.memory_mib, ", count ", group.count, ": none may be negative"));
    }
    if (group.gpu_count < 0 ||
        (group.gpu_count == 1 &&
         (group.gpu_milli <= 0 || group.gpu_milli > kGpuMilli)) ||
        (group.gpu_count > 1 && group.gpu_milli != kGpuMilli)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "gpu_count ", group.gpu_count, " with gpu_milli ",
          group.gpu_milli,
          ": a pod asks one GPU's share in (0, 1000], or whole GPUs (1000)"));
    }
  }
  return absl::OkStatus();
}

bool Admits(const NodePool& pool, const PodGroup& group) {
  if (group.cpu_milli > pool.cpu_milli || group.memory_mib > pool.memory_mib ||
      group.gpu_count > pool.gpus) {
    return false;
  }
  return group.gpu_count == 0 || group.models.empty() ||
         std::find(group.models.begin(), group.models.end(), pool.model) !=
             group.models.end();
}

// The thousandths every share is a multiple of, so the arc flow is exact.
int64_t ShareStep(absl::Span<const PodGroup> pods) {
  int64_t step = kGpuMilli;
  for (const PodGroup& group : pods) {
    if (IsShare(group)) step = std::gcd(step, group.gpu_milli);
  }
  return step;
}

// One pool's GPUs: a flow of `z` GPUs from 0 to 1000 thousandths, an arc
// per share size from every position it fits, a loss arc per step. Links
// each size's arcs to the pool's pod columns of that size; returns z.
int AddGpuFlow(Lp& lp, const std::map<int64_t, std::vector<int>>& by_size,
               int64_t step) {
  const int64_t positions = kGpuMilli / step;
  const int used = lp.AddColumn(0.0);
  std::vector<int> node_rows(static_cast<size_t>(positions) + 1);
  for (int64_t i = 0; i <= positions; ++i) {
    node_rows[static_cast<size_t>(i)] = lp.AddEqualToZero();
  }
  // Flow out of a position counts +1 in its row, flow in -1.
  lp.Set(node_rows.front(), used, -1.0);
  lp.Set(node_rows.back(), used, 1.0);
  for (int64_t i = 0; i < positions; ++i) {
    const int loss = lp.AddColumn(0.0);
    lp.Set(node_rows[static_cast<size_t>(i)], loss, 1.0);
    lp.Set(node_rows[static_cast<size_t>(i) + 1], loss, -1.0);
  }
  for (const auto& [milli, columns] : by_size) {
    const int64_t length = milli / step;
    const int link = lp.AddEqualToZero();
    for (int column : columns) lp.Set(link, column, -1.0);
    for (int64_t i = 0; i + length <= positions; ++i) {
      const int arc = lp.AddColumn(0.0);
      lp.Set(link, arc, 1.0);
      lp.Set(node_rows[static_cast<size_t>(i)], arc, 1.0);
      lp.Set(node_rows[static_cast<size_t>(i + length)], arc, -1.0);
    }
  }
  return used;
}

// One pool's columns and rows; appends the pool's column of each group it
// admits to `columns_of_group`.
void AddPool(Lp& lp, const NodePool& pool, absl::Span<const PodGroup> pods,
             int64_t step, std::vector<std::vector<int>>& columns_of_group) {
  const int gpus = lp.AddAtMost(static_cast<double>(pool.gpus * pool.nodes));
  const int cpu =
      lp.AddAtMost(static_cast<double>(pool.cpu_milli * pool.nodes));
  const int memory =
      lp.AddAtMost(static_cast<double>(pool.memory_mib * pool.nodes));
  std::map<int64_t, std::vector<int>> shares_by_size;
  for (size_t g = 0; g < pods.size(); ++g) {
    const PodGroup& group = pods[g];
    if (!Admits(pool, group)) continue;
    const int column = lp.AddColumn(static_cast<double>(GroupGpuMilli(group)));
    columns_of_group[g].push_back(column);
    lp.Set(cpu, column, static_cast<double>(group.cpu_milli));
    lp.Set(memory, column, static_cast<double>(group.memory_mib));
    if (IsShare(group)) {
      shares_by_size[group.gpu_milli].push_back(column);
    } else if (group.gpu_count > 0) {
      lp.Set(gpus, column, static_cast<double>(group.gpu_count));
    }
  }
  if (!shares_by_size.empty()) {
    lp.Set(gpus, AddGpuFlow(lp, shares_by_size, step), 1.0);
  }
}

}  // namespace

absl::StatusOr<PackingBound> BoundPackedGpu(absl::Span<const NodePool> pools,
                                            absl::Span<const PodGroup> pods) {
  if (absl::Status status = CheckPools(pools); !status.ok()) return status;
  if (absl::Status status = CheckPods(pods); !status.ok()) return status;
  PackingBound bound;
  for (const NodePool& pool : pools) {
    bound.capacity_milli += pool.gpus * pool.nodes * kGpuMilli;
  }
  if (std::none_of(pods.begin(), pods.end(), [](const PodGroup& group) {
        return group.gpu_count > 0 && group.count > 0;
      })) {
    return bound;  // nothing asks a GPU; GLPK refuses an empty problem
  }
  Lp lp;
  const int64_t step = ShareStep(pods);
  std::vector<std::vector<int>> columns_of_group(pods.size());
  for (const NodePool& pool : pools) {
    AddPool(lp, pool, pods, step, columns_of_group);
  }
  for (size_t g = 0; g < pods.size(); ++g) {
    if (columns_of_group[g].empty()) continue;
    const int count = lp.AddAtMost(pods[g].count);
    for (int column : columns_of_group[g]) lp.Set(count, column, 1.0);
  }
  absl::StatusOr<double> placed = lp.Maximum();
  if (!placed.ok()) return placed.status();
  bound.most_placed_milli = *placed;
  return bound;
}

}  // namespace deviceshare::bench
