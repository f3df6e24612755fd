// File: testing/input_text.h
//
// Inputs as people write them, for the tests of the readers (tests/input)
// and of simulate: pod manifests as YAML text, multi-document files, and
// temp files holding them. Header-only; every helper is a pure function
// except WriteTempFile, which writes one file per test and name inside a
// folder of the test process's own, removed when the process exits.
#ifndef DEVICESHARE_TESTS_TESTING_INPUT_TEXT_H_
#define DEVICESHARE_TESTS_TESTING_INPUT_TEXT_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {

// The test process's own folder under gtest's TempDir(); made on first
// use, removed with everything in it when the process exits (ctest runs
// each test in a process of its own, in parallel).
inline const std::string& ProcessTempFolder() {
  struct Folder {
    std::string path;
    Folder() {
      std::string pattern = ::testing::TempDir() + "/deviceshare-test-XXXXXX";
      if (mkdtemp(pattern.data()) != nullptr) path = pattern;
    }
    ~Folder() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path;
}

// Writes `text` to a fresh file named after the running test and `name`;
// returns its path.
inline std::string WriteTempFile(const std::string& name,
                                 const std::string& text) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path =
      absl::StrCat(ProcessTempFolder(), "/", info->test_suite_name(), ".",
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
