#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void CheckFailed(const char* file, int line, const char* condition,
                 const char* text) {
  fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, condition);
  if (text != NULL) fprintf(stderr, "  looking at: %s\n", text);
  abort();
}

void CheckOk(deviceshare_code code, char** error, const char* file, int line,
             const char* call) {
  if (code == DEVICESHARE_OK && *error == NULL) return;
  fprintf(stderr, "%s:%d: %s: code %d, want OK: %s\n", file, line, call,
          (int)code, *error != NULL ? *error : "(no message)");
  abort();
}

void CheckCode(deviceshare_code code, deviceshare_code want, char** error,
               const char* file, int line, const char* call) {
  if (code != want) {
    fprintf(stderr, "%s:%d: %s: code %d, want %d: %s\n", file, line, call,
            (int)code, (int)want, *error != NULL ? *error : "(no message)");
    abort();
  }
  if (want != DEVICESHARE_OK && (*error == NULL || **error == '\0')) {
    fprintf(stderr, "%s:%d: %s: code %d without a message\n", file, line, call,
            (int)code);
    abort();
  }
  deviceshare_free(*error);
  *error = NULL;
}

char* ReadExample(const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", DEVICESHARE_EXAMPLES_DIR, name);
  FILE* file = fopen(path, "rb");
  if (file == NULL) CheckFailed(__FILE__, __LINE__, "example exists", path);
  size_t size = 0, capacity = 4096;
  char* text = malloc(capacity);
  CHECK(text != NULL);
  size_t got;
  while ((got = fread(text + size, 1, capacity - size - 1, file)) > 0) {
    size += got;
    if (capacity - size - 1 == 0) {
      capacity *= 2;
      text = realloc(text, capacity);
      CHECK(text != NULL);
    }
  }
  fclose(file);
  text[size] = '\0';
  return text;
}

char* Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int size = vsnprintf(NULL, 0, format, args);
  va_end(args);
  CHECK(size >= 0);
  char* text = malloc((size_t)size + 1);
  CHECK(text != NULL);
  va_start(args, format);
  vsnprintf(text, (size_t)size + 1, format, args);
  va_end(args);
  return text;
}

/* Where the JSON value starting at `value` ends (one past it). */
static const char* ValueEnd(const char* value) {
  int depth = 0;
  int in_string = 0;
  const char* p = value;
  for (; *p != '\0'; ++p) {
    if (in_string) {
      if (*p == '\\' && p[1] != '\0') {
        ++p;
      } else if (*p == '"') {
        in_string = 0;
        if (depth == 0) return p + 1;
      }
    } else if (*p == '"') {
      in_string = 1;
    } else if (*p == '{' || *p == '[') {
      ++depth;
    } else if (*p == '}' || *p == ']') {
      if (depth == 0) return p; /* the end of the enclosing value */
      if (--depth == 0) return p + 1;
    } else if (*p == ',' && depth == 0) {
      return p;
    }
  }
  return p;
}

static char* Copy(const char* begin, const char* end) {
  char* copy = malloc((size_t)(end - begin) + 1);
  CHECK(copy != NULL);
  memcpy(copy, begin, (size_t)(end - begin));
  copy[end - begin] = '\0';
  return copy;
}

char* JsonValue(const char* json, const char* key) {
  char* needle = Format("\"%s\":", key);
  const char* at = strstr(json, needle);
  const size_t skip = strlen(needle);
  free(needle);
  if (at == NULL) return NULL;
  const char* value = at + skip;
  return Copy(value, ValueEnd(value));
}

char* JsonString(const char* json, const char* key) {
  char* value = JsonValue(json, key);
  if (value == NULL) return NULL;
  const size_t length = strlen(value);
  if (length < 2 || value[0] != '"') {
    free(value);
    return NULL;
  }
  char* unquoted = Copy(value + 1, value + length - 1);
  free(value);
  return unquoted;
}

long long JsonInt(const char* json, const char* key) {
  char* value = JsonValue(json, key);
  CHECK_TEXT(value != NULL, json);
  char* end = NULL;
  const long long number = strtoll(value, &end, 10);
  CHECK_TEXT(end != value && *end == '\0', json);
  free(value);
  return number;
}

char** JsonArrayItems(const char* array, size_t* count) {
  CHECK_TEXT(array[0] == '[', array);
  size_t capacity = 16;
  char** items = malloc(capacity * sizeof(char*));
  CHECK(items != NULL);
  *count = 0;
  const char* p = array + 1;
  while (*p != ']' && *p != '\0') {
    const char* end = ValueEnd(p);
    if (*count == capacity) {
      capacity *= 2;
      items = realloc(items, capacity * sizeof(char*));
      CHECK(items != NULL);
    }
    items[(*count)++] = Copy(p, end);
    p = *end == ',' ? end + 1 : end;
  }
  CHECK_TEXT(*p == ']', array);
  return items;
}

void FreeItems(char** items, size_t count) {
  for (size_t i = 0; i < count; ++i) free(items[i]);
  free(items);
}

size_t CountOf(const char* text, const char* needle) {
  size_t count = 0;
  const size_t length = strlen(needle);
  for (const char* at = strstr(text, needle); at != NULL;
       at = strstr(at + length, needle)) {
    ++count;
  }
  return count;
}

deviceshare_scheduler* NewScheduler(const char* config, const char* nodes) {
  char* error = NULL;
  deviceshare_scheduler* scheduler = NULL;
  CHECK_OK(deviceshare_scheduler_create(config, &scheduler, &error), error);
  CHECK(scheduler != NULL);
  if (nodes != NULL) {
    char* result = NULL;
    CHECK_OK(deviceshare_upsert_nodes(scheduler, nodes, &result, &error),
             error);
    deviceshare_free(result);
  }
  return scheduler;
}
