#include "deviceshare/policy/fgd/typical_pods.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/str_join.h"

namespace deviceshare::fgd {
namespace {

// A shape's identity and its order among equal counts.
using ShapeKey = std::tuple<int64_t, int32_t, int32_t, std::string>;

ShapeKey KeyOf(const TypicalPod& pod) {
  return {pod.cpu_milli, pod.gpu_milli, pod.gpu_count,
          absl::StrJoin(pod.models, "|")};
}

struct CountedShape {
  ShapeKey key;
  const TypicalPod* example;
  int64_t count;
};

}  // namespace

std::vector<TypicalPod> TypicalPodsOf(absl::Span<const TypicalPod> pods,
                                      int popularity_percent) {
  std::map<ShapeKey, CountedShape> by_key;
  for (const TypicalPod& pod : pods) {
    ShapeKey key = KeyOf(pod);
    auto [it, added] = by_key.try_emplace(key, CountedShape{key, &pod, 0});
    ++it->second.count;
  }
  std::vector<CountedShape> shapes;
  shapes.reserve(by_key.size());
  for (auto& [key, shape] : by_key) shapes.push_back(shape);
  std::sort(shapes.begin(), shapes.end(),
            [](const CountedShape& a, const CountedShape& b) {
              if (a.count != b.count) return a.count > b.count;
              return a.key > b.key;
            });
  const double total = static_cast<double>(pods.size());
  const double wanted = popularity_percent * total / 100.0;
  std::vector<TypicalPod> typical;
  double covered = 0;
  for (const CountedShape& shape : shapes) {
    if (covered >= wanted && !typical.empty()) break;
    TypicalPod pod = *shape.example;
    pod.share = static_cast<double>(shape.count);
    covered += pod.share;
    typical.push_back(std::move(pod));
  }
  for (TypicalPod& pod : typical) pod.share /= covered;
  return typical;
}

}  // namespace deviceshare::fgd
