// Host names to addresses, by a deadline. getaddrinfo(3) waits as long as resolv.conf lets it
// (timeout x attempts x name servers: 10 s and more with the defaults) and nothing can cut it
// short, so a DNS server that does not answer would hold a connect, and every lock call behind
// it, far past its connect timeout. Managed Redis is reached by name, and fails over by changing
// what the name resolves to, so names are looked up for every connect and never cached here.
#pragma once

#include <netdb.h>

#include <memory>
#include <string>

#include "transport/transport_error.hpp"

namespace lockbridge::detail {

// The addresses of `host` (a name, an IPv4 or IPv6 address) for TCP `port`, in getaddrinfo's
// order. An address is resolved at once on the calling thread. A name is looked up on a thread of
// its own (lockbridge-dns, detached), waited for until `deadline`: then a timeout is thrown and the
// lookup finishes on its own, freeing what it found. Connects to one host:port join the lookup in
// flight until one of them gives up on it; the next starts a new one (a lost query waits out
// resolv.conf's timeout, a new one may be answered at once), up to 4 at once per host and port.
// Throws TransportError: io when the name does not resolve, timeout.
//
// A lookup thread runs the library's code until getaddrinfo returns and it has handed over the
// answer: a program that unloads lockbridge (dlclose) must not do so while a lockbridge-dns thread
// exists (after a connect by name, for up to resolv.conf's timeouts).
std::shared_ptr<const addrinfo> resolve(const std::string& host, int port, Deadline deadline);

}  // namespace lockbridge::detail
