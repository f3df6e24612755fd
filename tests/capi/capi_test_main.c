/* The C API's test driver: `deviceshare_capi_tests <case>` runs one case
 * (each is its own ctest), no argument runs every case. A failed check
 * aborts the process. */
#include <stdio.h>
#include <string.h>

#include "cases.h"

typedef struct TestCase {
  const char* name;
  void (*run)(void);
} TestCase;

static const TestCase kCases[] = {
    {"version", TestVersion},
    {"parse_documents", TestParseDocuments},
    {"create_from_configs", TestCreateFromConfigs},
    {"null_arguments", TestNullArguments},
    {"unknown_and_destroyed_handles", TestUnknownAndDestroyedHandles},
    {"bad_inputs", TestBadInputs},
    {"prepared_pods", TestPreparedPods},
    {"filter_all_and_allocate_prepared", TestFilterAllAndAllocatePrepared},
    {"example_matches_simulate", TestExampleMatchesSimulate},
    {"node_objects", TestNodeObjects},
    {"steps", TestSteps},
    {"bind_from_annotations", TestBindFromAnnotations},
    {"dra_objects", TestDraObjects},
    {"concurrent_schedule_never_double_books",
     TestConcurrentScheduleNeverDoubleBooks},
    {"release_frees", TestReleaseFrees},
    {"resource_quota", TestResourceQuota},
};
static const size_t kCaseCount = sizeof(kCases) / sizeof(kCases[0]);

static void Run(const TestCase* test) {
  printf("[ RUN  ] %s\n", test->name);
  fflush(stdout);
  test->run();
  printf("[  OK  ] %s\n", test->name);
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: %s [case]\n", argv[0]);
    return 2;
  }
  for (size_t i = 0; i < kCaseCount; ++i) {
    if (argc == 1 || strcmp(argv[1], kCases[i].name) == 0) {
      Run(&kCases[i]);
      if (argc == 2) return 0;
    }
  }
  if (argc == 2) {
    fprintf(stderr, "unknown case %s; the cases are:\n", argv[1]);
    for (size_t i = 0; i < kCaseCount; ++i) {
      fprintf(stderr, "  %s\n", kCases[i].name);
    }
    return 2;
  }
  return 0;
}
