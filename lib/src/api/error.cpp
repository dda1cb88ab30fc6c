#include "lockbridge/error.hpp"

#include <array>

namespace lockbridge {
namespace {

// Each code once: its name (errc_name, JSON, docs/errors.md) and its description (the category's
// message, the end of every what()).
struct ErrcRow {
  Errc code;
  std::string_view name;
  const char* description;
};
constexpr std::array<ErrcRow, 10> kErrcRows{{
    {Errc::io, "io", "connection error"},
    {Errc::timeout, "timeout", "timed out"},
    {Errc::protocol, "protocol", "unexpected reply"},
    {Errc::server_reply, "server_reply", "Redis returned an error"},
    {Errc::wrong_type, "wrong_type", "key holds the wrong Redis type"},
    {Errc::bad_value, "bad_value", "unparsable lock value"},
    {Errc::lease_lost, "lease_lost", "lock no longer held"},
    {Errc::no_quorum, "no_quorum", "no quorum"},
    {Errc::bad_option, "bad_option", "invalid option or argument"},
    {Errc::tls, "tls", "TLS error"},
}};

const ErrcRow* row_of(Errc code) noexcept {
  for (const ErrcRow& row : kErrcRows) {
    if (row.code == code) return &row;
  }
  return nullptr;
}

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "lockbridge"; }
  std::string message(int value) const override {
    const ErrcRow* row = row_of(static_cast<Errc>(value));
    return row != nullptr ? row->description : "unknown lockbridge error";
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const Category category;
  return category;
}

const char* errc_name(Errc e) noexcept {
  const ErrcRow* row = row_of(e);
  return row != nullptr ? row->name.data() : "unknown";  // the names are literals: NUL-terminated
}

std::optional<Errc> errc_from_string(std::string_view name) noexcept {
  for (const ErrcRow& row : kErrcRows) {
    if (row.name == name) return row.code;
  }
  return std::nullopt;
}

}  // namespace lockbridge
