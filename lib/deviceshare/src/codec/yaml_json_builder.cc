#include "deviceshare/codec/yaml_json_builder.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "codec/yaml_convert.h"
#include "nlohmann/json.hpp"

namespace deviceshare {
namespace {

using nlohmann::json;

// An error leaves the event handling by exception, caught at each public
// method: the handling nests (a node completes into its parent, which may
// hand an item to the visitor).
struct Stop {
  absl::Status status;
};

[[noreturn]] void Throw(absl::Status status) { throw Stop{std::move(status)}; }

void Check(absl::Status status) {
  if (!status.ok()) Throw(std::move(status));
}

// How much a unit (a document, or an item handed out on its own) has
// expanded to.
struct Counts {
  int64_t nodes = 0;
  int64_t text = 0;
};

int DepthOf(const json& value) {
  int deepest = 0;
  if (value.is_structured()) {
    for (const json& child : value) {
      deepest = std::max(deepest, DepthOf(child) + 1);
    }
  }
  return deepest;
}

}  // namespace

class YamlJsonBuilder::Impl {
 public:
  Impl(YamlDocumentVisitor& visitor, bool split_items)
      : visitor_(visitor), split_items_(split_items) {}

  bool failed() const { return failed_; }

  // Runs one event's handling, turning an exception into the status.
  template <typename F>
  absl::Status Run(F&& handle) {
    try {
      handle();
    } catch (const Stop& stop) {
      failed_ = true;
      return stop.status;
    }
    return absl::OkStatus();
  }

  void DocumentEnd() {
    const bool had_root = has_root_;
    json root = std::move(root_);
    const bool split = items_split_;
    root_ = json();
    has_root_ = false;
    items_split_ = false;
    started_ = false;
    anchors_.clear();
    unit_ = Counts();
    stack_.clear();
    if (had_root) Check(visitor_.OnDocument(document_, std::move(root), split));
  }

  void Scalar(YamlMark mark, const std::string& tag, absl::string_view anchor,
              const std::string& value) {
    // yaml-cpp reports a plain null as a null event; libyaml as a scalar.
    if (tag == "?" && IsYamlNull(value)) return Null(mark, anchor);
    if (AwaitingKey()) {
      Key(mark, value);
      if (!anchor.empty()) {
        absl::StatusOr<json> resolved = ConvertYamlScalar(tag, value, mark);
        Check(resolved.status());
        anchors_[std::string(anchor)] = {
            *std::move(resolved),
            {1, static_cast<int64_t>(value.size())},
            0,
            value};
      }
      return;
    }
    Enter(mark);
    const Counts before = unit_;
    Count(mark, 1, static_cast<int64_t>(value.size()));
    absl::StatusOr<json> resolved = ConvertYamlScalar(tag, value, mark);
    Check(resolved.status());
    Complete(*std::move(resolved), anchor, Since(before), value);
  }

  void Null(YamlMark mark, absl::string_view anchor) {
    RefuseKey(mark);
    // A document that is only null is empty: skipped, as LoadAll's are.
    if (stack_.empty()) return;
    Enter(mark);
    const Counts before = unit_;
    Count(mark, 1, 0);
    Complete(json(nullptr), anchor, Since(before), std::nullopt);
  }

  void Alias(YamlMark mark, absl::string_view anchor) {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      // Unknown, or its node is still open: `&a [*a]`.
      Throw(YamlErrorAt(
          mark, absl::StrFormat("alias *%s names no complete node before "
                                "it (a recursive alias?)",
                                anchor)));
    }
    const Anchored& named = it->second;
    if (AwaitingKey()) {
      if (!named.scalar) {
        Throw(YamlErrorAt(mark,
                          "a mapping key must be a scalar to become "
                          "JSON"));
      }
      Key(mark, *named.scalar);
      return;
    }
    Enter(mark);
    if (static_cast<int>(stack_.size()) + named.depth > kMaxDepth) {
      Throw(YamlErrorAt(mark, absl::StrFormat("nesting deeper than %d levels "
                                              "(a recursive alias?)",
                                              kMaxDepth)));
    }
    alias_.nodes += named.counts.nodes;
    alias_.text += named.counts.text;
    if (alias_.nodes > kMaxAliasNodes || alias_.text > kMaxAliasTextBytes) {
      Throw(YamlErrorAt(
          mark, absl::StrFormat("aliases expand to more than %d nodes or %d "
                                "MiB of text in one stream (an alias bomb?)",
                                kMaxAliasNodes, kMaxAliasTextBytes >> 20)));
    }
    const Counts before = unit_;
    Count(mark, named.counts.nodes, named.counts.text);
    // Copied before Complete may store a new anchor over this one.
    json value = named.value;
    std::optional<std::string> scalar = named.scalar;
    Complete(std::move(value), "", Since(before), std::move(scalar));
  }

  void Open(YamlMark mark, absl::string_view anchor, json value) {
    RefuseKey(mark);
    Enter(mark);
    Frame frame;
    frame.before = unit_;
    Count(mark, 1, 0);
    frame.anchor = std::string(anchor);
    frame.items = split_items_ && value.is_array() && stack_.size() == 1 &&
                  stack_[0].value.is_object() && stack_[0].has_key &&
                  stack_[0].key == "items";
    frame.value = std::move(value);
    stack_.push_back(std::move(frame));
  }

  void Close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.items) items_split_ = true;
    Complete(std::move(frame.value), frame.anchor, Since(frame.before),
             std::nullopt);
  }

 private:
  struct Anchored {
    json value;
    Counts counts;
    int depth = 0;
    // A scalar's text as written, for its use as a mapping key.
    std::optional<std::string> scalar;
  };

  struct Frame {
    json value;  // an array or an object
    std::string anchor;
    Counts before;         // the unit's counts before this node
    bool items = false;    // the document's items, handed out one by one
    size_t next_item = 0;  // with items
    bool has_key = false;  // an object: a key read, its value not yet
    std::string key;
  };

  bool AwaitingKey() const {
    return !stack_.empty() && stack_.back().value.is_object() &&
           !stack_.back().has_key;
  }

  void RefuseKey(YamlMark mark) {
    if (AwaitingKey()) {
      Throw(YamlErrorAt(mark, "a mapping key must be a scalar to become JSON"));
    }
  }

  void Key(YamlMark mark, const std::string& name) {
    Frame& top = stack_.back();
    Count(mark, 0, static_cast<int64_t>(name.size()));
    if (top.value.contains(name)) {
      Throw(YamlErrorAt(mark, absl::StrFormat("duplicate key \"%s\"", name)));
    }
    top.key = name;
    top.has_key = true;
  }

  // A node begins: the document's first, or an item that is its own unit.
  void Enter(YamlMark mark) {
    if (stack_.empty()) {
      if (!started_) {
        started_ = true;
        ++document_;
        Check(visitor_.OnDocumentStart(document_,
                                       static_cast<size_t>(mark.line + 1)));
      }
    } else if (stack_.back().items) {
      saved_ = unit_;
      unit_ = Counts();
    }
    if (static_cast<int>(stack_.size()) > kMaxDepth) {
      Throw(YamlErrorAt(mark, absl::StrFormat("nesting deeper than %d levels "
                                              "(a recursive alias?)",
                                              kMaxDepth)));
    }
  }

  void Count(YamlMark mark, int64_t nodes, int64_t text) {
    unit_.nodes += nodes;
    unit_.text += text;
    if (unit_.nodes > kMaxNodes) {
      Throw(YamlErrorAt(mark, absl::StrFormat("document expands to more than "
                                              "%d nodes",
                                              kMaxNodes)));
    }
    if (unit_.text > kMaxTextBytes) {
      Throw(YamlErrorAt(mark, absl::StrFormat("document expands to more than "
                                              "%d MiB of text (an alias "
                                              "bomb?)",
                                              kMaxTextBytes >> 20)));
    }
  }

  Counts Since(const Counts& before) const {
    return {unit_.nodes - before.nodes, unit_.text - before.text};
  }

  // A node is read: it goes to its parent, to the visitor as an item, or
  // is the document.
  void Complete(json value, absl::string_view anchor, Counts counts,
                std::optional<std::string> scalar) {
    if (!anchor.empty()) {
      anchors_[std::string(anchor)] = {value, counts, DepthOf(value),
                                       std::move(scalar)};
    }
    if (stack_.empty()) {
      root_ = std::move(value);
      has_root_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.items) {
      unit_ = saved_;
      Check(visitor_.OnItem(document_, top.next_item++, std::move(value)));
    } else if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else {
      top.value.emplace(std::move(top.key), std::move(value));
      top.key.clear();
      top.has_key = false;
    }
  }

  YamlDocumentVisitor& visitor_;
  const bool split_items_;
  bool failed_ = false;
  size_t document_ = 0;  // non-empty documents so far
  bool started_ = false;
  bool has_root_ = false;
  bool items_split_ = false;
  json root_;
  std::vector<Frame> stack_;
  absl::flat_hash_map<std::string, Anchored> anchors_;
  Counts unit_;
  Counts saved_;  // the document's counts while an item is read
  Counts alias_;  // over the whole stream
};

YamlJsonBuilder::YamlJsonBuilder(YamlDocumentVisitor& visitor, bool split_items)
    : impl_(std::make_unique<Impl>(visitor, split_items)) {}

YamlJsonBuilder::~YamlJsonBuilder() = default;

bool YamlJsonBuilder::failed() const { return impl_->failed(); }

absl::Status YamlJsonBuilder::Scalar(YamlMark mark, const std::string& tag,
                                     absl::string_view anchor,
                                     const std::string& value) {
  return impl_->Run([&] { impl_->Scalar(mark, tag, anchor, value); });
}

absl::Status YamlJsonBuilder::Null(YamlMark mark, absl::string_view anchor) {
  return impl_->Run([&] { impl_->Null(mark, anchor); });
}

absl::Status YamlJsonBuilder::Alias(YamlMark mark, absl::string_view anchor) {
  return impl_->Run([&] { impl_->Alias(mark, anchor); });
}

absl::Status YamlJsonBuilder::SequenceStart(YamlMark mark,
                                            absl::string_view anchor) {
  return impl_->Run([&] { impl_->Open(mark, anchor, json::array()); });
}

absl::Status YamlJsonBuilder::SequenceEnd() {
  return impl_->Run([&] { impl_->Close(); });
}

absl::Status YamlJsonBuilder::MapStart(YamlMark mark,
                                       absl::string_view anchor) {
  return impl_->Run([&] { impl_->Open(mark, anchor, json::object()); });
}

absl::Status YamlJsonBuilder::MapEnd() {
  return impl_->Run([&] { impl_->Close(); });
}

absl::Status YamlJsonBuilder::DocumentEnd() {
  return impl_->Run([&] { impl_->DocumentEnd(); });
}

}  // namespace deviceshare
