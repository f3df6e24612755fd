// File: dra/served_socket.h
//
// ServedSocket: one grpc::Server listening on one unix socket file, plus
// the identity of the file it created (deviceplugin/socket_files.h), so
// that a watchdog can tell when kubelet or anyone else deleted or replaced
// the file, and so that shutting down removes the file only while it is
// still its own. It owns the services it serves; they go after the server.
//
// Thread safety: none; the owner serializes calls.
#ifndef DEVICESHARE_AGENT_DRA_SERVED_SOCKET_H_
#define DEVICESHARE_AGENT_DRA_SERVED_SOCKET_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceplugin/socket_files.h"

namespace deviceshare::agent::dra {

class ServedSocket {
 public:
  // Creates the parent folder when missing, then serves `services` on
  // `path`. Unavailable, naming the path, when that fails. A stale file at
  // `path` is the caller's to remove.
  static absl::StatusOr<std::unique_ptr<ServedSocket>> Serve(
      std::string path, std::vector<std::unique_ptr<grpc::Service>> services);

  ~ServedSocket();  // Shutdown(/*remove_socket=*/false)

  ServedSocket(const ServedSocket&) = delete;
  ServedSocket& operator=(const ServedSocket&) = delete;

  // True while the file at path() is the one this server created.
  bool Intact() const;

  // Stops serving; in-flight calls get `grace`, then are cancelled. With
  // `remove_socket`, removes the file when it is still this server's.
  // Idempotent.
  void Shutdown(bool remove_socket, absl::Duration grace = absl::Seconds(1));

  const std::string& path() const { return path_; }

 private:
  ServedSocket(std::string path,
               std::vector<std::unique_ptr<grpc::Service>> services,
               std::unique_ptr<grpc::Server> server,
               deviceplugin::FileIdentity socket);

  const std::string path_;
  // Declared before server_ so that the server is destroyed first.
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
  const deviceplugin::FileIdentity socket_;
};

}  // namespace deviceshare::agent::dra

#endif  // DEVICESHARE_AGENT_DRA_SERVED_SOCKET_H_
