#include "testing/whole_file.h"

#include <fstream>
#include <sstream>

namespace deviceshare::testing {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace deviceshare::testing
