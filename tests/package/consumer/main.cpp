// Uses the installed headers and library: a malformed URL must be a lockbridge::Error.
#include <lockbridge/lockbridge.hpp>

#include <iostream>

int main() {
  try {
    lockbridge::Client client("redis://host:notaport");
  } catch (const lockbridge::Error& error) {
    std::cout << "lockbridge " << LOCKBRIDGE_VERSION << ": " << error.what() << "\n";
    return error.errc() == lockbridge::Errc::bad_option ? 0 : 1;
  }
  return 1;
}
