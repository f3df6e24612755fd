#include "deviceshare/kube/kube_config.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_fields.h"
#include "deviceshare/status_macros.h"
#include "file_text.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {
namespace {

using ::deviceshare::internal::IndexPath;
using ::deviceshare::internal::KeyPath;
using ::deviceshare::internal::PathError;
using ::deviceshare::internal::ReadBool;
using ::deviceshare::internal::ReadString;
using nlohmann::json;

// One entry of a named list (contexts, clusters, users): its index for error
// paths and its body (`context`, `cluster` or `user`).
struct NamedEntry {
  std::string path;  // "users[2].user"
  const json* body = nullptr;
};

// The entry of `doc[list]` whose `name` is `name`; `body_key` is the key of
// its body. The body may be absent (a user with no credentials).
absl::StatusOr<NamedEntry> FindNamed(const json& doc, const std::string& list,
                                     absl::string_view body_key,
                                     const std::string& name,
                                     absl::string_view referrer) {
  auto it = doc.find(list);
  std::vector<std::string> names;
  if (it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return PathError(list, "not a list");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& entry = (*it)[i];
      const std::string entry_path = IndexPath(list, i);
      if (!entry.is_object()) return PathError(entry_path, "not a mapping");
      auto name_it = entry.find("name");
      if (name_it == entry.end()) {
        return PathError(entry_path, "has no name");
      }
      DS_ASSIGN_OR_RETURN(std::string entry_name,
                          ReadString(*name_it, KeyPath(entry_path, "name"),
                                     /*allow_empty=*/false));
      if (entry_name != name) {
        names.push_back(std::move(entry_name));
        continue;
      }
      NamedEntry found{KeyPath(entry_path, body_key), nullptr};
      auto body = entry.find(std::string(body_key));
      if (body != entry.end() && !body->is_null()) {
        if (!body->is_object()) return PathError(found.path, "not a mapping");
        found.body = &*body;
      }
      return found;
    }
  }
  return absl::NotFoundError(
      absl::StrCat(referrer, ": ", list, " has no entry named \"", name,
                   "\" (names: ", absl::StrJoin(names, ", "), ")"));
}

// `body[key]` as a string, "" when absent.
absl::StatusOr<std::string> OptionalString(const json* body,
                                           const std::string& path,
                                           const std::string& key) {
  if (body == nullptr) return std::string();
  auto it = body->find(key);
  if (it == body->end() || it->is_null()) return std::string();
  return ReadString(*it, KeyPath(path, key), /*allow_empty=*/true);
}

absl::StatusOr<std::string> DecodeBase64(const std::string& text,
                                         const std::string& path) {
  std::string compact;
  compact.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') compact.push_back(c);
  }
  std::string decoded;
  if (!absl::Base64Unescape(compact, &decoded)) {
    return PathError(path, "not valid base64");
  }
  return decoded;
}

// PEM content from `<key>-data` (base64) or `<key>` (a file path, relative
// to the kubeconfig's directory); the data wins, as in kubectl.
absl::StatusOr<std::string> ReadPemField(const json* body,
                                         const std::string& path,
                                         const std::string& key,
                                         const std::string& base_dir) {
  const std::string data_key = key + "-data";
  DS_ASSIGN_OR_RETURN(std::string data, OptionalString(body, path, data_key));
  if (!data.empty()) return DecodeBase64(data, KeyPath(path, data_key));
  DS_ASSIGN_OR_RETURN(std::string file, OptionalString(body, path, key));
  if (file.empty()) return std::string();
  absl::StatusOr<std::string> text =
      internal::ReadFileText(internal::ResolvePath(base_dir, file));
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat(KeyPath(path, key), ": ", text.status().message()));
  }
  return text;
}

absl::Status ReadCluster(const json& doc, const std::string& name,
                         const std::string& referrer,
                         const std::string& base_dir, KubeConfig& config) {
  DS_ASSIGN_OR_RETURN(NamedEntry cluster,
                      FindNamed(doc, "clusters", "cluster", name, referrer));
  if (cluster.body == nullptr) return PathError(cluster.path, "missing");
  const json& body = *cluster.body;
  auto server = body.find("server");
  if (server == body.end()) return PathError(cluster.path, "has no server");
  const std::string server_path = KeyPath(cluster.path, "server");
  DS_ASSIGN_OR_RETURN(config.server,
                      ReadString(*server, server_path, /*allow_empty=*/false));
  if (config.server.rfind("https://", 0) != 0 &&
      config.server.rfind("http://", 0) != 0) {
    return PathError(server_path,
                     absl::StrCat("\"", config.server,
                                  "\" is not an http:// or https:// URL"));
  }
  DS_ASSIGN_OR_RETURN(config.ca_pem,
                      ReadPemField(cluster.body, cluster.path,
                                   "certificate-authority", base_dir));
  auto insecure = body.find("insecure-skip-tls-verify");
  if (insecure != body.end() && !insecure->is_null()) {
    DS_ASSIGN_OR_RETURN(
        config.insecure_skip_tls_verify,
        ReadBool(*insecure, KeyPath(cluster.path, "insecure-skip-tls-verify")));
  }
  return absl::OkStatus();
}

absl::Status ReadUser(const json& doc, const std::string& name,
                      const std::string& referrer, const std::string& base_dir,
                      KubeConfig& config) {
  DS_ASSIGN_OR_RETURN(NamedEntry user,
                      FindNamed(doc, "users", "user", name, referrer));
  if (user.body == nullptr) return absl::OkStatus();
  for (const char* unsupported :
       {"exec", "auth-provider", "username", "password"}) {
    auto it = user.body->find(unsupported);
    if (it != user.body->end() && !it->is_null()) {
      return absl::UnimplementedError(absl::StrCat(
          KeyPath(user.path, unsupported), ": user \"", name,
          "\" uses authentication deviceshare does not support; give it a "
          "token, tokenFile or client certificate"));
    }
  }
  DS_ASSIGN_OR_RETURN(config.bearer_token,
                      OptionalString(user.body, user.path, "token"));
  DS_ASSIGN_OR_RETURN(std::string token_file,
                      OptionalString(user.body, user.path, "tokenFile"));
  if (!token_file.empty()) {
    config.token_file = internal::ResolvePath(base_dir, token_file);
  }
  DS_ASSIGN_OR_RETURN(
      config.client_cert_pem,
      ReadPemField(user.body, user.path, "client-certificate", base_dir));
  DS_ASSIGN_OR_RETURN(
      config.client_key_pem,
      ReadPemField(user.body, user.path, "client-key", base_dir));
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return PathError(user.path,
                     "a client certificate needs both client-certificate "
                     "and client-key");
  }
  return absl::OkStatus();
}

absl::StatusOr<KubeConfig> ParseKubeconfig(const json& doc,
                                           absl::string_view context_name,
                                           const std::string& base_dir) {
  if (!doc.is_object()) return PathError("(top level)", "not a mapping");
  std::string name(context_name);
  if (name.empty()) {
    DS_ASSIGN_OR_RETURN(name, OptionalString(&doc, "", "current-context"));
    if (name.empty()) {
      return absl::InvalidArgumentError(
          "current-context is not set and no context was given");
    }
  }
  const std::string referrer = absl::StrCat("context \"", name, "\"");
  DS_ASSIGN_OR_RETURN(NamedEntry context,
                      FindNamed(doc, "contexts", "context", name, referrer));
  if (context.body == nullptr) return PathError(context.path, "missing");
  DS_ASSIGN_OR_RETURN(std::string cluster,
                      OptionalString(context.body, context.path, "cluster"));
  if (cluster.empty()) return PathError(context.path, "names no cluster");
  DS_ASSIGN_OR_RETURN(std::string user,
                      OptionalString(context.body, context.path, "user"));
  DS_ASSIGN_OR_RETURN(std::string ns,
                      OptionalString(context.body, context.path, "namespace"));

  KubeConfig config;
  if (!ns.empty()) config.default_namespace = ns;
  DS_RETURN_IF_ERROR(ReadCluster(doc, cluster, KeyPath(context.path, "cluster"),
                                 base_dir, config));
  if (!user.empty()) {
    DS_RETURN_IF_ERROR(
        ReadUser(doc, user, KeyPath(context.path, "user"), base_dir, config));
  }
  return config;
}

}  // namespace

absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                          absl::string_view context) {
  absl::StatusOr<KubeConfig> config = [&]() -> absl::StatusOr<KubeConfig> {
    absl::StatusOr<std::string> text = internal::ReadFileText(path);
    if (!text.ok()) {
      // The prefix below names the path already.
      absl::string_view message = text.status().message();
      absl::ConsumePrefix(&message, absl::StrCat(path, ": "));
      return absl::Status(text.status().code(), message);
    }
    DS_ASSIGN_OR_RETURN(json doc, ParseJsonOrYaml(*text));
    return ParseKubeconfig(doc, context, internal::DirName(path));
  }();
  if (!config.ok()) {
    return absl::Status(
        config.status().code(),
        absl::StrCat("kubeconfig ", path, ": ", config.status().message()));
  }
  return config;
}

absl::StatusOr<KubeConfig> KubeConfigFromFlag(const std::string& kubeconfig) {
  absl::StatusOr<KubeConfig> config =
      kubeconfig.empty() ? InClusterConfig() : LoadKubeconfig(kubeconfig);
  if (!config.ok()) {
    return absl::Status(
        config.status().code(),
        absl::StrCat(
            kubeconfig.empty() ? "in-cluster credentials" : "--kubeconfig",
            ": ", config.status().message()));
  }
  return config;
}

}  // namespace deviceshare::kube
