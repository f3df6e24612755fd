#include "dra/served_socket.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent::dra {

using deviceplugin::FileIdentity;
using deviceplugin::IdentifyFile;

absl::StatusOr<std::unique_ptr<ServedSocket>> ServedSocket::Serve(
    std::string path, std::vector<std::unique_ptr<grpc::Service>> services) {
  std::error_code error;
  const std::filesystem::path folder =
      std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(folder, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat(
        "creating folder ", folder.string(), ": ", error.message()));
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix://", path),
                           grpc::InsecureServerCredentials());
  for (const std::unique_ptr<grpc::Service>& service : services) {
    builder.RegisterService(service.get());
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("gRPC could not listen on unix://", path));
  }
  std::optional<FileIdentity> socket = IdentifyFile(path);
  if (!socket.has_value()) {
    server->Shutdown();
    return absl::UnavailableError(
        absl::StrCat("socket ", path, " vanished right after gRPC created it"));
  }
  return std::unique_ptr<ServedSocket>(new ServedSocket(
      std::move(path), std::move(services), std::move(server), *socket));
}

ServedSocket::ServedSocket(std::string path,
                           std::vector<std::unique_ptr<grpc::Service>> services,
                           std::unique_ptr<grpc::Server> server,
                           FileIdentity socket)
    : path_(std::move(path)),
      services_(std::move(services)),
      server_(std::move(server)),
      socket_(socket) {}

ServedSocket::~ServedSocket() { Shutdown(/*remove_socket=*/false); }

bool ServedSocket::Intact() const {
  return server_ != nullptr && IdentifyFile(path_) == socket_;
}

void ServedSocket::Shutdown(bool remove_socket, absl::Duration grace) {
  if (server_ == nullptr) return;
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  // Wait() joins gRPC's threads, so no handler touches a service later.
  server_->Wait();
  if (remove_socket && IdentifyFile(path_) == socket_) {
    if (absl::Status s = deviceplugin::RemoveIfPresent(path_); !s.ok()) {
      spdlog::warn("{}", s.ToString());
    }
  }
  server_.reset();
}

}  // namespace deviceshare::agent::dra
