#include "deviceshare/agent/vgpu_installer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "testing/temp_folder.h"

namespace deviceshare::agent {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

class VgpuInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    library_ = dir_ + "/libvgpu-build.so";
    std::ofstream(library_, std::ios::binary) << "\x7f"
                                                 "ELF-first";
  }

  ::deviceshare::testing::TempFolder folder_{"vgpu-install-"};
  std::string dir_;
  std::string library_;
};

TEST_F(VgpuInstallerTest, InstallsTheLibraryAndThePreloadFile) {
  const std::string hook = dir_ + "/hook/vgpu";
  ASSERT_TRUE(InstallVgpuLibrary(library_, hook).ok());
  EXPECT_EQ(Slurp(hook + "/libvgpu.so"),
            "\x7f"
            "ELF-first");
  EXPECT_EQ(Slurp(hook + "/ld.so.preload"), "/usr/local/vgpu/libvgpu.so\n");
  struct stat info;
  ASSERT_EQ(stat((hook + "/libvgpu.so").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0755u);
}

TEST_F(VgpuInstallerTest, ReplacesByRenameSoMountedCopiesKeepTheirInode) {
  const std::string hook = dir_ + "/hook";
  ASSERT_TRUE(InstallVgpuLibrary(library_, hook).ok());
  struct stat before;
  ASSERT_EQ(stat((hook + "/libvgpu.so").c_str(), &before), 0);
  // The same bytes again: nothing is rewritten.
  ASSERT_TRUE(InstallVgpuLibrary(library_, hook).ok());
  struct stat same;
  ASSERT_EQ(stat((hook + "/libvgpu.so").c_str(), &same), 0);
  EXPECT_EQ(same.st_ino, before.st_ino);
  // A new build arrives as a new inode; the old one is untouched.
  std::ofstream(library_, std::ios::binary) << "\x7f"
                                               "ELF-second";
  ASSERT_TRUE(InstallVgpuLibrary(library_, hook).ok());
  struct stat after;
  ASSERT_EQ(stat((hook + "/libvgpu.so").c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino);
  EXPECT_EQ(Slurp(hook + "/libvgpu.so"),
            "\x7f"
            "ELF-second");
}

TEST_F(VgpuInstallerTest, RefusesWhatIsNotALibraryNamingTheFlag) {
  std::ofstream(library_, std::ios::binary) << "#!/bin/sh\n";
  absl::Status status = InstallVgpuLibrary(library_, dir_ + "/hook");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--vgpu-library"), absl::string_view::npos);
  EXPECT_NE(status.message().find(library_), absl::string_view::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/hook/libvgpu.so"));

  status = InstallVgpuLibrary(dir_ + "/missing.so", dir_ + "/hook");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("missing.so"), absl::string_view::npos);
}

#ifdef DEVICESHARE_VGPU_LIB
TEST_F(VgpuInstallerTest, InstallsTheBuiltInterposer) {
  const std::string hook = dir_ + "/hook";
  ASSERT_TRUE(InstallVgpuLibrary(DEVICESHARE_VGPU_LIB, hook).ok());
  EXPECT_EQ(Slurp(hook + "/libvgpu.so"), Slurp(DEVICESHARE_VGPU_LIB));
}
#endif

}  // namespace
}  // namespace deviceshare::agent
