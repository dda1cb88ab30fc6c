// Where a lock's releases are announced, and how a waiter listens for them. lockbridge's own
// channel ({key}:lockbridge:released) is sharded pub/sub, and a fair-mode message names the waiter
// it is for; Redisson's (redisson_lock__channel:{key}) is plain PUBLISH on one server, and its "0"
// names nobody.
#pragma once

#include <string>

namespace lockbridge::detail {

struct ReleaseChannel {
  std::string name;
  bool sharded = true;               // SSUBSCRIBE / SPUBLISH; false: SUBSCRIBE / PUBLISH
  bool payload_names_waiter = true;  // a non-empty message wakes only the waiter it names
};

}  // namespace lockbridge::detail
