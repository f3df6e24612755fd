// ReadWholeFile: a file's bytes, for tests that compare what a program
// wrote or what the repository ships.
#ifndef DEVICESHARE_TESTS_TESTING_WHOLE_FILE_H_
#define DEVICESHARE_TESTS_TESTING_WHOLE_FILE_H_

#include <string>

namespace deviceshare::testing {

// Empty when the file cannot be read: callers compare the contents, so a
// missing file fails them rather than being skipped.
std::string ReadWholeFile(const std::string& path);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_WHOLE_FILE_H_
