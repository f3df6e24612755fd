/* File: check.h
 *
 * What the C API's tests (C11, no test framework) need: a check macro that
 * names the failing line and aborts, checks of a call's code and message,
 * and a few readers for the compact JSON the library answers with. The
 * JSON helpers are not a JSON parser: they find a key's first occurrence
 * and cut out a balanced value, which is enough for answers whose shape
 * the tests know. */
#ifndef DEVICESHARE_TESTS_CAPI_CHECK_H_
#define DEVICESHARE_TESTS_CAPI_CHECK_H_

#include <stddef.h>

#include "deviceshare/c/deviceshare.h"

/* Aborts (failing the ctest) with the file, line and condition. */
#define CHECK(condition) \
  ((condition) ? (void)0 : CheckFailed(__FILE__, __LINE__, #condition, NULL))
/* As CHECK, with a text (e.g. the JSON looked at) printed beside it. */
#define CHECK_TEXT(condition, text) \
  ((condition) ? (void)0 : CheckFailed(__FILE__, __LINE__, #condition, (text)))
/* `call` returned DEVICESHARE_OK and left `error` NULL. */
#define CHECK_OK(call, error) \
  CheckOk((call), &(error), __FILE__, __LINE__, #call)
/* `call` returned `want` with a non-empty message in `error`, which is
 * freed and reset to NULL. */
#define CHECK_CODE(call, want, error) \
  CheckCode((call), (want), &(error), __FILE__, __LINE__, #call)

void CheckFailed(const char* file, int line, const char* condition,
                 const char* text);
void CheckOk(deviceshare_code code, char** error, const char* file, int line,
             const char* call);
void CheckCode(deviceshare_code code, deviceshare_code want, char** error,
               const char* file, int line, const char* call);

/* The contents of examples/<name> (DEVICESHARE_EXAMPLES_DIR); aborts when
 * it cannot be read. Free with free(). */
char* ReadExample(const char* name);

/* A malloc'd printf. */
char* Format(const char* format, ...);

/* The raw text of the value after the first `"key":` in `json` (an object,
 * array, string with its quotes, number or literal); NULL when the key is
 * absent. Free with free(). */
char* JsonValue(const char* json, const char* key);
/* The first `"key":"..."` string value without its quotes (no escapes
 * decoded); NULL when absent. Free with free(). */
char* JsonString(const char* json, const char* key);
/* The first `"key":<integer>`; aborts when absent. */
long long JsonInt(const char* json, const char* key);

/* The items of a JSON array's top level, each a malloc'd text; *count
 * gets their number. Free with FreeItems. */
char** JsonArrayItems(const char* array, size_t* count);
void FreeItems(char** items, size_t count);

/* A scheduler from `config` (NULL: the defaults) with the nodes of
 * `nodes` (NULL: none) upserted; aborts on an error. */
deviceshare_scheduler* NewScheduler(const char* config, const char* nodes);

/* How often `needle` occurs in `text`. */
size_t CountOf(const char* text, const char* needle);

#endif /* DEVICESHARE_TESTS_CAPI_CHECK_H_ */
