#include "deviceshare/agent/served_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

nlohmann::json ServedJson(const ServedContainer& entry) {
  return {{"served",
           {{"pod", entry.pod_uid},
            {"container", entry.container_index},
            {"name", entry.container_name},
            {"devices", entry.device_ids}}}};
}

absl::Status WriteAll(int fd, const std::string& text,
                      const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServedJournal>> ServedJournal::Open(
    std::string path) {
  std::unique_ptr<ServedJournal> journal(new ServedJournal(path));
  std::error_code error;
  const std::filesystem::path parent =
      std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the state directory ", parent.string(),
                     ": ", error.message()));
  }
  std::ifstream in(path);
  if (in) {
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    std::vector<std::string> lines = absl::StrSplit(text, '\n');
    // A line without its newline was being written when the agent died.
    const bool torn = !text.empty() && text.back() != '\n';
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].empty()) continue;
      absl::Status applied = journal->Apply(lines[i]);
      if (!applied.ok()) {
        if (torn && i + 1 == lines.size()) break;
        return absl::DataLossError(
            absl::StrCat(path, " line ", i + 1, ": ", applied.message()));
      }
    }
  }
  // Start from a clean file: the replayed state, nothing torn.
  absl::Status compacted = journal->Compact();
  if (!compacted.ok()) return compacted;
  return journal;
}

ServedJournal::~ServedJournal() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status ServedJournal::Apply(const std::string& line) {
  const nlohmann::json value = nlohmann::json::parse(line, nullptr, false);
  if (!value.is_object() || value.size() != 1) {
    return absl::InvalidArgumentError("not a journal entry");
  }
  try {
    if (value.contains("served")) {
      const nlohmann::json& s = value["served"];
      ServedContainer entry;
      entry.pod_uid = s.at("pod").get<std::string>();
      entry.container_index = s.at("container").get<int32_t>();
      entry.container_name = s.at("name").get<std::string>();
      entry.device_ids = s.at("devices").get<std::vector<std::string>>();
      served_[{entry.pod_uid, entry.container_index}] = std::move(entry);
    } else if (value.contains("unserved")) {
      const nlohmann::json& s = value["unserved"];
      served_.erase(
          {s.at("pod").get<std::string>(), s.at("container").get<int32_t>()});
    } else if (value.contains("forgotten")) {
      const std::string uid = value["forgotten"].get<std::string>();
      for (auto it = served_.lower_bound({uid, INT32_MIN});
           it != served_.end() && it->first.first == uid;) {
        it = served_.erase(it);
      }
    } else {
      return absl::InvalidArgumentError("unknown journal entry");
    }
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad journal entry: ", error.what()));
  }
  return absl::OkStatus();
}

absl::Status ServedJournal::Append(const std::string& line) {
  absl::Status status = WriteAll(fd_, absl::StrCat(line, "\n"), path_);
  if (!status.ok()) return status;
  if (::fdatasync(fd_) != 0) return Errno("cannot sync", path_);
  ++lines_;
  // Tombstones pile up: rewrite once they dominate.
  if (lines_ > 256 && lines_ > 4 * static_cast<int64_t>(served_.size())) {
    return Compact();
  }
  return absl::OkStatus();
}

bool ServedJournal::HasPod(const std::string& pod_uid) const {
  auto first = served_.lower_bound({pod_uid, INT32_MIN});
  return first != served_.end() && first->first.first == pod_uid;
}

absl::Status ServedJournal::Serve(const ServedContainer& entry) {
  absl::Status status = Append(ServedJson(entry).dump());
  if (status.ok()) served_[{entry.pod_uid, entry.container_index}] = entry;
  return status;
}

absl::Status ServedJournal::Unserve(const std::string& pod_uid,
                                    int32_t container_index) {
  nlohmann::json line = {
      {"unserved", {{"pod", pod_uid}, {"container", container_index}}}};
  absl::Status status = Append(line.dump());
  if (status.ok()) served_.erase({pod_uid, container_index});
  return status;
}

absl::Status ServedJournal::Forget(const std::string& pod_uid) {
  nlohmann::json line = {{"forgotten", pod_uid}};
  absl::Status status = Append(line.dump());
  if (!status.ok()) return status;
  for (auto it = served_.lower_bound({pod_uid, INT32_MIN});
       it != served_.end() && it->first.first == pod_uid;) {
    it = served_.erase(it);
  }
  return absl::OkStatus();
}

absl::Status ServedJournal::Compact() {
  const std::string temp = absl::StrCat(path_, ".tmp");
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp);
  std::string text;
  for (const auto& [key, entry] : served_) {
    absl::StrAppend(&text, ServedJson(entry).dump(), "\n");
  }
  absl::Status status = WriteAll(fd, text, temp);
  if (status.ok() && ::fsync(fd) != 0) status = Errno("cannot sync", temp);
  ::close(fd);
  if (!status.ok()) return status;
  if (::rename(temp.c_str(), path_.c_str()) != 0) {
    return Errno("cannot replace", path_);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) return Errno("cannot open", path_);
  lines_ = static_cast<int64_t>(served_.size());
  return absl::OkStatus();
}

}  // namespace deviceshare::agent
