// File: testing/fake_api_responses.h
//
// How FakeApiServer's handlers answer: JSON bodies, and Status objects with
// the API server's reasons and wording; plus the few JSON accessors they
// share.
//
// Thread safety: pure functions (each writes only the response it is given).
#ifndef DEVICESHARE_TESTS_TESTING_FAKE_API_RESPONSES_H_
#define DEVICESHARE_TESTS_TESTING_FAKE_API_RESPONSES_H_

#include <httplib.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::testing::fake_api {

// A Status object with `code` (Success below 300, else Failure with the
// reason the API server gives that code).
void SendStatus(httplib::Response& res, int code, const std::string& message);
void SendJson(httplib::Response& res, int code, const nlohmann::json& body);

// The HTTP status for an error of the store: NotFound 404, AlreadyExists
// and Aborted 409, InvalidArgument 400, anything else 500.
int HttpCodeOf(const absl::Status& status);

// The API server's 409 message for a write with a stale resourceVersion.
std::string ConflictMessage(absl::string_view qualified_resource,
                            absl::string_view name);

// Runs `handler`, turning an escaped exception (a malformed body read with
// a throwing accessor) into a 500 rather than a dropped connection.
httplib::Server::Handler Guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> handler);

// object[key] when it is a string, else "".
std::string StringAt(const nlohmann::json& object, const char* key);
// object["metadata"] when it is an object, else an empty object.
const nlohmann::json& MetadataOf(const nlohmann::json& object);

}  // namespace deviceshare::testing::fake_api

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_API_RESPONSES_H_
