#include "codec/json_stream.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codec/yaml_convert.h"
#include "nlohmann/json.hpp"

namespace deviceshare {
namespace {

using nlohmann::json;
using Event = json::parse_event_t;

// nlohmann's callback returns only whether to keep a value: an error leaves
// the parser by exception.
struct StopJson {
  absl::Status status;
};

// The callback's state. Depths are nlohmann's: the number of containers
// around a value, so the document is at 0, its keys' values at 1 and the
// items of its `items` at 2.
class ItemSplitter {
 public:
  ItemSplitter(YamlDocumentVisitor& visitor, bool split_items)
      : visitor_(visitor), split_items_(split_items) {}

  bool items_split() const { return items_split_; }

  bool operator()(int depth, Event event, json& parsed) {
    if (depth > kMaxDepth) {
      Fail(absl::StrFormat("nesting deeper than %d levels", kMaxDepth));
    }
    const bool item = in_items_ && depth == 2;
    switch (event) {
      case Event::object_start:
        if (item) StartItem();
        keys_.emplace_back();
        Count(1, 0);
        return true;
      case Event::key: {
        const std::string& name = parsed.get_ref<const std::string&>();
        keys_.back().push_back(name);
        Count(0, static_cast<int64_t>(name.size()));
        if (depth == 1) top_key_ = name;
        return true;
      }
      case Event::object_end:
        CheckKeys(parsed);
        keys_.pop_back();
        return item ? HandOut(parsed) : true;
      case Event::array_start:
        if (item) StartItem();
        Count(1, 0);
        if (split_items_ && depth == 1 && top_key_ == "items") {
          in_items_ = true;
          items_split_ = true;
        }
        return true;
      case Event::array_end:
        if (depth == 1 && in_items_) {
          in_items_ = false;
          return true;
        }
        return item ? HandOut(parsed) : true;
      case Event::value:
        if (item) StartItem();
        Count(1, parsed.is_string()
                     ? static_cast<int64_t>(
                           parsed.get_ref<const std::string&>().size())
                     : 0);
        return item ? HandOut(parsed) : true;
    }
    return true;
  }

 private:
  [[noreturn]] void Fail(absl::string_view message) {
    const std::string where =
        in_items_ ? absl::StrCat("items[", next_item_, "]: ") : "";
    throw StopJson{
        absl::InvalidArgumentError(absl::StrCat("JSON: ", where, message))};
  }

  void StartItem() {
    saved_nodes_ = nodes_;
    saved_text_ = text_;
    nodes_ = 0;
    text_ = 0;
  }

  // JSON has no aliases, but a 1 GiB document of `[0,0,...]` would still
  // expand to far more memory than its text: the same limits as YAML.
  void Count(int64_t nodes, int64_t text) {
    nodes_ += nodes;
    text_ += text;
    if (nodes_ > kMaxNodes) {
      Fail(
          absl::StrFormat("document expands to more than %d nodes", kMaxNodes));
    }
    if (text_ > kMaxTextBytes) {
      Fail(absl::StrFormat("document expands to more than %d MiB of text",
                           kMaxTextBytes >> 20));
    }
  }

  // nlohmann keeps the last of two equal keys; YAML refuses them, and so
  // does this, naming the key (found only once the sizes disagree).
  void CheckKeys(const json& object) {
    std::vector<std::string>& keys = keys_.back();
    if (keys.size() == object.size()) return;
    std::sort(keys.begin(), keys.end());
    auto twin = std::adjacent_find(keys.begin(), keys.end());
    Fail(absl::StrFormat("duplicate key \"%s\"",
                         twin == keys.end() ? "" : *twin));
  }

  bool HandOut(json& item) {
    nodes_ = saved_nodes_;
    text_ = saved_text_;
    absl::Status status =
        visitor_.OnItem(document_, next_item_++, std::move(item));
    if (!status.ok()) throw StopJson{std::move(status)};
    return false;  // dropped from the document once handed out
  }

  YamlDocumentVisitor& visitor_;
  const bool split_items_;
  const size_t document_ = 1;
  bool in_items_ = false;
  bool items_split_ = false;
  size_t next_item_ = 0;
  std::string top_key_;
  std::vector<std::vector<std::string>> keys_;  // of each open object
  int64_t nodes_ = 0;
  int64_t text_ = 0;
  int64_t saved_nodes_ = 0;
  int64_t saved_text_ = 0;
};

}  // namespace

std::optional<absl::Status> StreamJsonDocument(absl::string_view text,
                                               YamlDocumentVisitor& visitor,
                                               bool split_items) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == absl::string_view::npos ||
      (text[start] != '{' && text[start] != '[')) {
    return std::nullopt;
  }
  const size_t line = 1 + static_cast<size_t>(std::count(
                              text.begin(), text.begin() + start, '\n'));
  absl::Status status = visitor.OnDocumentStart(1, line);
  if (!status.ok()) return status;
  ItemSplitter splitter(visitor, split_items);
  json document;
  try {
    document = json::parse(
        text.begin(), text.end(),
        [&splitter](int depth, Event event, json& parsed) {
          return splitter(depth, event, parsed);
        },
        /*allow_exceptions=*/false);
  } catch (const StopJson& stop) {
    return stop.status;
  }
  if (document.is_discarded()) {
    // Not JSON after all (or broken): YAML reads it from the start, and
    // says where it breaks. (A pass that only checks the JSON first would
    // cost 40 % more on every good file.)
    visitor.OnRestart();
    return std::nullopt;
  }
  return visitor.OnDocument(1, std::move(document), splitter.items_split());
}

}  // namespace deviceshare
