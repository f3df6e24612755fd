// File: extender/name_list.h
//
// NameList: node names in order, held in one buffer (the names
// concatenated, and where each ends). ExtenderArgs keeps its NodeNames so:
// a request of thousands of names costs a couple of allocations, not one
// per name longer than std::string's inline buffer (most real node names,
// such as "ip-10-0-1-23.ec2.internal").
//
// Thread safety: a value type; const methods may run concurrently.
#ifndef DEVICESHARE_EXTENDER_NAME_LIST_H_
#define DEVICESHARE_EXTENDER_NAME_LIST_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::extender {

class NameList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = absl::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = const absl::string_view*;
    using reference = absl::string_view;

    const_iterator() = default;
    const_iterator(const NameList* list, size_t index)
        : list_(list), index_(index) {}
    absl::string_view operator*() const { return (*list_)[index_]; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const const_iterator& other) const {
      return index_ == other.index_;
    }
    bool operator!=(const const_iterator& other) const {
      return !(*this == other);
    }

   private:
    const NameList* list_ = nullptr;
    size_t index_ = 0;
  };
  using iterator = const_iterator;
  using value_type = absl::string_view;
  using size_type = size_t;

  NameList() = default;
  NameList(std::initializer_list<absl::string_view> names);
  explicit NameList(const std::vector<std::string>& names);

  // Room for `names` names of `bytes` bytes in all.
  void reserve(size_t names, size_t bytes);
  void push_back(absl::string_view name);

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  absl::string_view operator[](size_t index) const {
    const uint32_t begin = index == 0 ? 0 : ends_[index - 1];
    return absl::string_view(names_.data() + begin, ends_[index] - begin);
  }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

  // Views into this list (valid while it lives and is not changed).
  std::vector<absl::string_view> Views() const;
  std::vector<std::string> ToStrings() const;

  bool operator==(const NameList& other) const = default;

 private:
  std::string names_;           // the names, concatenated
  std::vector<uint32_t> ends_;  // where each name ends in names_
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_NAME_LIST_H_
