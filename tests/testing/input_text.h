// File: testing/input_text.h
//
// Inputs as people write them, for the tests of the readers (tests/input)
// and of simulate: pod manifests as YAML text, multi-document files, and
// temp files holding them. Header-only; every helper is a pure function
// except WriteTempFile, which writes one file per test and name.
#ifndef DEVICESHARE_TESTS_TESTING_INPUT_TEXT_H_
#define DEVICESHARE_TESTS_TESTING_INPUT_TEXT_H_

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {

// Writes `text` to a fresh file named after the running test and `name`;
// returns its path.
inline std::string WriteTempFile(const std::string& name,
                                 const std::string& text) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path =
      absl::StrCat(::testing::TempDir(), "/", info->test_suite_name(), ".",
                   info->name(), ".", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

// A pod "default/<name>" with one container "main" whose resource limits
// are `limits` (a YAML flow mapping body, either dialect), and optional
// annotations (also a flow mapping body).
inline std::string PodYaml(const std::string& name, const std::string& limits,
                           const std::string& annotations = "") {
  return absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
      "\n  namespace: default\n",
      annotations.empty()
          ? ""
          : absl::StrCat("  annotations: {", annotations, "}\n"),
      "spec:\n  containers:\n  - name: main\n    image: x\n    resources:\n"
      "      limits: {",
      limits, "}\n");
}

// Documents joined by "---".
inline std::string Docs(const std::vector<std::string>& docs) {
  return absl::StrJoin(docs, "---\n");
}

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_INPUT_TEXT_H_
