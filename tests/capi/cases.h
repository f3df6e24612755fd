/* File: cases.h
 *
 * The test cases of the C API, one function each; capi_test_main.c runs
 * one by name (a ctest each) or all of them (the sanitized build). */
#ifndef DEVICESHARE_TESTS_CAPI_CASES_H_
#define DEVICESHARE_TESTS_CAPI_CASES_H_

/* capi_basics_test.c */
void TestVersion(void);
void TestParseDocuments(void);
void TestCreateFromConfigs(void);
void TestNullArguments(void);
void TestUnknownAndDestroyedHandles(void);
void TestBadInputs(void);
void TestPreparedPods(void);

/* capi_filter_all_test.c */
void TestFilterAllAndAllocatePrepared(void);

/* capi_example_test.c */
void TestExampleMatchesSimulate(void);
void TestNodeObjects(void);
void TestSteps(void);
void TestBindFromAnnotations(void);
void TestDraObjects(void);

/* capi_concurrency_test.c */
void TestConcurrentScheduleNeverDoubleBooks(void);
void TestReleaseFrees(void);
void TestResourceQuota(void);

#endif /* DEVICESHARE_TESTS_CAPI_CASES_H_ */
