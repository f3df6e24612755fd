#include "go_object.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "json_text.h"

namespace deviceshare::extender::internal {
namespace {

using Json = nlohmann::json;

// Records the keys of the outermost object, in order, and nothing else.
class TopLevelKeys final : public nlohmann::json_sax<Json> {
 public:
  explicit TopLevelKeys(std::vector<std::string>* keys) : keys_(keys) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool key(string_t& key) override {
    if (depth_ == 1) keys_->push_back(key);
    return true;
  }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  std::vector<std::string>* keys_;
  int depth_ = 0;
};

}  // namespace

bool GoFoldEquals(absl::string_view key, absl::string_view field) {
  constexpr absl::string_view kKelvinSign = "\xE2\x84\xAA";
  constexpr absl::string_view kLongS = "\xC5\xBF";
  size_t k = 0;
  for (char f : field) {
    if (k >= key.size()) return false;
    const char want = absl::ascii_tolower(f);
    const auto c = static_cast<unsigned char>(key[k]);
    if (c < 0x80) {
      if (absl::ascii_tolower(c) != want) return false;
      ++k;
    } else if (want == 'k' &&
               key.substr(k, kKelvinSign.size()) == kKelvinSign) {
      k += kKelvinSign.size();
    } else if (want == 's' && key.substr(k, kLongS.size()) == kLongS) {
      k += kLongS.size();
    } else {
      return false;
    }
  }
  return k == key.size();
}

bool NestsDeeperThan(absl::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return true;
        break;
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
    }
  }
  return false;
}

absl::StatusOr<GoObject> GoObject::Parse(absl::string_view body,
                                         absl::string_view type_name) {
  if (NestsDeeperThan(body, kMaxJsonDepth)) {
    return absl::InvalidArgumentError(absl::StrCat(
        type_name, ": body nests deeper than ", kMaxJsonDepth, " levels"));
  }
  Json object;
  try {
    object = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(type_name, ": body is not valid JSON: ", e.what()));
  }
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        type_name, ": body ", DescribeValue(object), " is not a JSON object"));
  }
  return GoObject(body, std::move(object));
}

const std::vector<std::string>& GoObject::KeyOrder() {
  if (!key_order_.has_value()) {
    key_order_.emplace();
    TopLevelKeys keys(&*key_order_);
    // Parse() has accepted the body, so this pass cannot fail.
    Json::sax_parse(body_.begin(), body_.end(), &keys);
  }
  return *key_order_;
}

Json* GoObject::Field(absl::string_view name, GoFieldKind kind) {
  Json* found = nullptr;
  int matches = 0;
  for (auto& [key, value] : object_.items()) {
    if (!GoFoldEquals(key, name)) continue;
    ++matches;
    found = &value;
  }
  if (matches > 1) {
    found = nullptr;
    const std::vector<std::string>& order = KeyOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (!GoFoldEquals(*it, name)) continue;
      Json& value = object_[*it];
      if (kind == GoFieldKind::kValue && value.is_null()) continue;
      found = &value;
      break;
    }
  }
  return found != nullptr && found->is_null() ? nullptr : found;
}

}  // namespace deviceshare::extender::internal
