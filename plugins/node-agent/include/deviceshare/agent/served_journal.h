// File: agent/served_journal.h
//
// ServedJournal: the node agent's durable memory of which pod containers
// it has handed GPUs to, so that a restarted agent neither hands a pod's
// share out twice nor forgets one. One JSON object per line, appended and
// fdatasync'ed before Allocate answers kubelet:
//   {"served":{"pod":"<uid>","container":1,"name":"c","devices":["GPU-a::3"]}}
//   {"unserved":{"pod":"<uid>","container":1}}   (PreStart moved it)
//   {"forgotten":"<uid>"}                        (the pod is gone)
// Open() replays the file; a torn last line (a crash mid-write) is dropped.
// Compact() rewrites the file with only the live entries (temp + rename).
//
// Thread safety: not thread-safe; the allocation matcher calls it under its
// lock.
#ifndef DEVICESHARE_AGENT_SERVED_JOURNAL_H_
#define DEVICESHARE_AGENT_SERVED_JOURNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace deviceshare::agent {

struct ServedContainer {
  std::string pod_uid;
  int32_t container_index = 0;
  std::string container_name;
  std::vector<std::string> device_ids;  // sorted

  bool operator==(const ServedContainer& other) const = default;
};

class ServedJournal {
 public:
  // Creates the file (and its directory) when missing. An unreadable file,
  // or a bad line other than the last, is an error naming the line.
  static absl::StatusOr<std::unique_ptr<ServedJournal>> Open(std::string path);
  ~ServedJournal();

  // What the file says now, keyed by (pod uid, container index).
  const std::map<std::pair<std::string, int32_t>, ServedContainer>& served()
      const {
    return served_;
  }

  // Whether any container of the pod is served.
  bool HasPod(const std::string& pod_uid) const;

  absl::Status Serve(const ServedContainer& entry);
  absl::Status Unserve(const std::string& pod_uid, int32_t container_index);
  absl::Status Forget(const std::string& pod_uid);
  absl::Status Compact();

  const std::string& path() const { return path_; }

 private:
  explicit ServedJournal(std::string path) : path_(std::move(path)) {}
  absl::Status Append(const std::string& line);
  absl::Status Apply(const std::string& line);

  const std::string path_;
  int fd_ = -1;
  int64_t lines_ = 0;
  std::map<std::pair<std::string, int32_t>, ServedContainer> served_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_SERVED_JOURNAL_H_
