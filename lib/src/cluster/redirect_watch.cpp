#include "cluster/redirect_watch.hpp"

namespace lockbridge::detail {

RedirectWatch::RedirectWatch(Connection& connection, bool asking) noexcept : connection_(connection), asking_(asking) {
  connection_.set_hook(this);
}

RedirectWatch::~RedirectWatch() { connection_.set_hook(nullptr); }

void RedirectWatch::on_error_reply(std::string_view text) {
  if (!redirect_) redirect_ = parse_redirect(text);  // nullopt for any other error
  if (text.starts_with("TRYAGAIN")) try_again_ = true;
}

}  // namespace lockbridge::detail
