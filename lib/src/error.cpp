#include "lockbridge/error.hpp"

namespace lockbridge {
namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "lockbridge"; }
  std::string message(int value) const override {
    switch (static_cast<Errc>(value)) {
      case Errc::io: return "connection error";
      case Errc::timeout: return "timed out";
      case Errc::protocol: return "unexpected reply";
      case Errc::server_reply: return "Redis returned an error";
      case Errc::wrong_type: return "key holds the wrong Redis type";
      case Errc::bad_value: return "unparsable lock value";
      case Errc::lease_lost: return "lock no longer held";
      case Errc::no_quorum: return "no quorum";
      case Errc::bad_option: return "invalid option or argument";
    }
    return "unknown lockbridge error";
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const Category category;
  return category;
}

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::io: return "io";
    case Errc::timeout: return "timeout";
    case Errc::protocol: return "protocol";
    case Errc::server_reply: return "server_reply";
    case Errc::wrong_type: return "wrong_type";
    case Errc::bad_value: return "bad_value";
    case Errc::lease_lost: return "lease_lost";
    case Errc::no_quorum: return "no_quorum";
    case Errc::bad_option: return "bad_option";
  }
  return "unknown";
}

}  // namespace lockbridge
