// lockbridge: one table per enum, naming its values in both directions.
//
// Every enum lockbridge shows or parses (strategies, presets, wait modes, error codes, the CLI's
// own) has exactly one NameTable, so a name is written once and to_string() and parsing can never
// disagree.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace lockbridge {

template <class Enum, std::size_t N>
class NameTable {
 public:
  using Entry = std::pair<Enum, std::string_view>;
  constexpr explicit NameTable(const std::array<Entry, N>& entries) : entries_(entries) {}

  // The value's name; `unknown` for a value outside the table (a cast from a bad integer).
  constexpr std::string_view name(Enum value, std::string_view unknown = "unknown") const noexcept {
    for (const auto& [known, name] : entries_) {
      if (known == value) return name;
    }
    return unknown;
  }
  // The value of that exact name, or nullopt.
  constexpr std::optional<Enum> parse(std::string_view name) const noexcept {
    for (const auto& [value, known] : entries_) {
      if (known == name) return value;
    }
    return std::nullopt;
  }
  // "a, b or c", for messages that list the choices.
  std::string choices() const {
    std::string text;
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) text += i + 1 == N ? " or " : ", ";
      text += entries_[i].second;
    }
    return text;
  }
  constexpr const std::array<Entry, N>& entries() const noexcept { return entries_; }

 private:
  std::array<Entry, N> entries_;
};

}  // namespace lockbridge
