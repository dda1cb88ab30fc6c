// TLS: rediss:// against the fixture server's TLS port (tls-auth-clients optional) and against
// servers of the tests' own (a client certificate required, an expired server certificate), and
// every way a TLS connection can fail: each a clear Errc with a message that says what to fix,
// never a hang, and nothing changed in Redis. The lock suites themselves run over TLS as the
// "TLS." copies (tests/CMakeLists.txt); TlsCopies checks that they really do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "lockbridge/mutex.hpp"
#include "redis_test_support.hpp"
#include "silent_server.hpp"
#include "topology.hpp"
#include "transport/tls_context.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

ClientOptions trusting(TlsOptions tls = test_tls()) {
  ClientOptions options;
  options.tls = std::move(tls);
  options.connect_timeout = std::chrono::milliseconds(2000);
  options.command_timeout = std::chrono::milliseconds(2000);
  return options;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The server's port the client connected to, as the server saw it (CLIENT INFO's laddr).
std::string local_address(const Client& client) {
  const std::string info = client.command({"CLIENT", "INFO"}).str;
  const auto start = info.find("laddr=");
  return start == std::string::npos ? std::string() : info.substr(start + 6, info.find(' ', start) - start - 6);
}

// Locks and unlocks `key` through `client`, both strategies: the whole lock protocol (scripts
// included) works over the connection.
void lock_cycle(const Client& client, const std::string& key) {
  for (const MutexOptions& options : {token_options(), hardened_options()}) {
    Mutex mutex(client, key, options);
    ASSERT_TRUE(mutex.try_lock());
    EXPECT_TRUE(raw({"EXISTS", key}).integer == 1);
    mutex.unlock();
    EXPECT_FALSE(mutex.last_error());
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  }
}

std::vector<std::string> server_tls(const std::string& certificate, const std::string& auth_clients) {
  return {"--tls-cert-file",    tls_file(certificate), "--tls-key-file",     tls_file("server.key"),
          "--tls-ca-cert-file", tls_file("ca.pem"),    "--tls-auth-clients", auth_clients};
}

// ---- the TLS copies of the suites -------------------------------------------------------------

TEST(TlsCopies, TestClientsConnectWhereTheRunSays) {
  const Client client = test_client();
  if (over_tls()) {
    EXPECT_TRUE(client.url().tls);
    EXPECT_EQ(local_address(client), "127.0.0.1:" + std::to_string(tls_port()));
  } else {
    EXPECT_FALSE(client.url().tls);
    EXPECT_THAT(local_address(client), HasSubstr("redis.sock"));
  }
}

// ---- connecting -------------------------------------------------------------------------------

TEST(Tls, LocksOverRedissTrustingTheCa) {
  const Client client(tls_url(), trusting());
  EXPECT_EQ(local_address(client), "127.0.0.1:" + std::to_string(tls_port()));
  lock_cycle(client, unique_key());
}

TEST(Tls, TheTlsOptionTurnsTlsOnForARedisUrl) {
  TlsOptions tls = test_tls();
  tls.enabled = true;
  const Client client("redis://127.0.0.1:" + std::to_string(tls_port()), trusting(tls));
  lock_cycle(client, unique_key());
}

TEST(Tls, AHostNameOnTheCertificateIsAcceptedAndAnotherRefused) {
  const std::string port = std::to_string(tls_port());
  Client("rediss://localhost:" + port, trusting()).ping();  // DNS:localhost
  Client("rediss://[::1]:" + port, trusting()).ping();      // IP:::1 (the fixture binds ::1 where it can)

  TlsOptions other_name = test_tls();
  other_name.server_name = "redis.example.com";
  const std::string key = unique_key();
  Mutex mutex(Client(tls_url(), trusting(other_name)), key, token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::tls);
  EXPECT_THAT(error.what(), HasSubstr("host name mismatch"));
  EXPECT_THAT(error.what(), HasSubstr("redis.example.com"));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "nothing was sent";
}

TEST(Tls, PooledConnectionsAreReusedAfterTheirSessionTickets) {
  // TLS 1.3 servers send session tickets after the handshake: an idle pooled connection is
  // readable then, yet not closed. It must be reused, not dropped as closed by the server.
  ClientOptions options = trusting();
  options.pool_size = 1;
  const Client client(tls_url(), options);
  const std::int64_t first = client.command({"CLIENT", "ID"}).integer;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the tickets have arrived by now
  for (int i = 0; i < 5; ++i) EXPECT_EQ(client.command({"CLIENT", "ID"}).integer, first);
}

TEST(Tls, ACommandOfAMegabyteCrossesManyRecords) {
  const Client client(tls_url(), trusting());
  const std::string key = unique_key();
  const std::string value(1 << 20, 'x');
  client.command({"SET", key, value, "PX", "60000"});
  EXPECT_EQ(client.command({"GET", key}).str, value);
  raw({"DEL", key});
}

// ---- mutual TLS -------------------------------------------------------------------------------

TEST(Tls, MutualTlsNeedsTheClientCertificate) {
  const auto server = ServerProcess::start_tls_server(server_tls("server.pem", "yes"));
  const std::string url = "rediss://127.0.0.1:" + std::to_string(server->tls_port());

  Mutex without(Client(url, trusting()), "lbtest:mtls", token_options());
  const Error refused = expect_error([&] { (void)without.try_lock(); });
  EXPECT_EQ(refused.errc(), Errc::tls);
  // TLS 1.3 tells of it after the request went out: by the server's alert ("wants a client
  // certificate", nothing ran), or by a reset that overtook the alert ("may require one").
  const std::string message = refused.what();
  if (message.find("it may require one") == std::string::npos) {
    EXPECT_THAT(message, HasSubstr("the server wants a client certificate (--cert and --key"));
    EXPECT_THAT(message, Not(HasSubstr("outcome unknown"))) << "the alert says nothing ran";
  } else {
    EXPECT_THAT(message, HasSubstr("asking for a client certificate, and none was given: it may require one (--cert"));
    EXPECT_THAT(message, HasSubstr("outcome unknown")) << "a reset is a guess";
  }
  EXPECT_EQ(server->command({"EXISTS", "lbtest:mtls"}), "0") << "nothing was written";

  TlsOptions with_certificate = test_tls();
  with_certificate.cert_file = tls_file("client.pem");
  with_certificate.key_file = tls_file("client.key");
  const Client client(url, trusting(with_certificate));
  Mutex mutex(client, "lbtest:mtls", token_options());
  ASSERT_TRUE(mutex.try_lock());
  mutex.unlock();
  EXPECT_FALSE(mutex.last_error());
}

TEST(Tls, AClientCertificateTheServerRefusesIsATlsErrorSayingWhyEveryTime) {
  const auto server = ServerProcess::start_tls_server(server_tls("server.pem", "yes"));
  const std::string url = "rediss://127.0.0.1:" + std::to_string(server->tls_port());
  // TLS 1.3: the server's alert comes after the client's first request went out, and the reset
  // that answers the unread request can fail the client's write before it reads the alert (it
  // did in most runs before the alert was read back from the receive queue): every attempt, on a
  // new connection, must still say why.
  const std::pair<const char*, const char*> cases[] = {
      {"untrusted-client.pem", "the server refused the client certificate (is it signed by a CA the server trusts"},
      {"expired-client.pem", "the server refused the client certificate: it has expired"}};
  for (const auto& [certificate, why] : cases) {
    TlsOptions tls = test_tls();
    tls.cert_file = tls_file(certificate);
    tls.key_file = tls_file("client.key");
    for (int attempt = 0; attempt < 20; ++attempt) {
      Mutex mutex(Client(url, trusting(tls)), "lbtest:mtls-refused", token_options());
      const Error error = expect_error([&] { (void)mutex.try_lock(); });
      EXPECT_EQ(error.errc(), Errc::tls) << certificate << ", attempt " << attempt << ": " << error.what();
      EXPECT_THAT(error.what(), HasSubstr(why)) << certificate << ", attempt " << attempt;
      EXPECT_THAT(error.what(), Not(HasSubstr("outcome unknown"))) << "the alert says nothing ran";
    }
  }
  EXPECT_EQ(server->command({"EXISTS", "lbtest:mtls-refused"}), "0") << "nothing was written";
}

// ---- what fails, and how ----------------------------------------------------------------------

TEST(Tls, AnUnknownCaIsRefused) {
  TlsOptions other_ca;
  other_ca.ca_file = tls_file("other-ca.pem");
  for (const TlsOptions& tls : {other_ca, TlsOptions{}}) {  // another CA; the system's store
    const std::string key = unique_key();
    Mutex mutex(Client(tls_url(), trusting(tls)), key, token_options());
    const Error error = expect_error([&] { (void)mutex.try_lock(); });
    EXPECT_EQ(error.errc(), Errc::tls);
    EXPECT_THAT(error.what(), HasSubstr("unknown CA"));
    EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "nothing was sent";
  }
}

TEST(Tls, InsecureSkipsVerification) {
  TlsOptions insecure;
  insecure.ca_file = tls_file("other-ca.pem");
  insecure.verify = false;
  lock_cycle(Client(tls_url(), trusting(insecure)), unique_key());
}

TEST(Tls, AnExpiredServerCertificateIsRefused) {
  const auto server = ServerProcess::start_tls_server(server_tls("expired.pem", "no"));
  Mutex mutex(Client("rediss://127.0.0.1:" + std::to_string(server->tls_port()), trusting()), "lbtest:expired",
              token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::tls);
  EXPECT_THAT(error.what(), HasSubstr("expired"));
  EXPECT_EQ(server->command({"EXISTS", "lbtest:expired"}), "0") << "nothing was sent";
}

TEST(Tls, APlainClientOnTheTlsPortIsToldToUseTls) {
  const std::string key = unique_key();
  Mutex mutex(Client("redis://127.0.0.1:" + std::to_string(tls_port()), trusting(TlsOptions{})), key, token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::io);
  EXPECT_THAT(error.what(), HasSubstr("rediss://"));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Tls, ATlsClientOnAPlainPortIsToldItIsNotTls) {
  // Redis reads the TLS hello as an inline command: it waits for a newline (a timeout here), or
  // finds one among the hello's random bytes and answers an error in plain text.
  const std::string key = unique_key();
  ClientOptions options = trusting();
  options.connect_timeout = std::chrono::milliseconds(300);
  Mutex mutex(Client("rediss://127.0.0.1:" + std::to_string(tcp_port()), options), key, token_options());
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_THAT(error.errc(), ::testing::AnyOf(Errc::timeout, Errc::tls)) << error.what();
  EXPECT_THAT(error.what(), ::testing::AnyOf(HasSubstr("is the port a TLS port"), HasSubstr("does not speak TLS")));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(Tls, AServerThatNeverShakesHandsIsAConnectTimeout) {
  const SilentServer server;
  ClientOptions options = trusting();
  options.connect_timeout = std::chrono::milliseconds(200);
  const Error error = expect_error([&] { Client("rediss://" + server.address(), options).ping(); });
  EXPECT_EQ(error.errc(), Errc::timeout);
  EXPECT_THAT(error.what(), HasSubstr("no TLS handshake within the connect timeout"));
}

// The error of a PING through a Client with `tls`, which must be Errc::tls.
Error tls_failure(const TlsOptions& tls) {
  const Error error = expect_error([&] { Client(tls_url(), trusting(tls)).ping(); });
  EXPECT_EQ(error.errc(), Errc::tls) << error.what();
  return error;
}

TEST(Tls, UnreadableOrMismatchedFilesAreNamedAndTheirContentNeverShown) {
  TlsOptions missing = test_tls();
  missing.ca_file = test_dir() + "/no-such-ca.pem";
  EXPECT_THAT(tls_failure(missing).what(), HasSubstr("no-such-ca.pem' (--cacert): No such file or directory"));

  TlsOptions mismatched = test_tls();
  mismatched.cert_file = tls_file("client.pem");
  mismatched.key_file = tls_file("server.key");
  const Error error = tls_failure(mismatched);
  EXPECT_THAT(error.what(), HasSubstr("mismatch"));
  EXPECT_THAT(error.what(), HasSubstr("server.key"));

  TlsOptions key_as_certificate = test_tls();
  key_as_certificate.cert_file = tls_file("client.key");
  key_as_certificate.key_file = tls_file("client.key");
  const std::string message = tls_failure(key_as_certificate).what();
  const std::string key_text = file_text(tls_file("client.key"));
  ASSERT_FALSE(key_text.empty());
  EXPECT_THAT(message, Not(HasSubstr("PRIVATE KEY")));
  EXPECT_THAT(message, Not(HasSubstr(key_text.substr(40, 20))));
}

// ---- the files: read with bounds, named with their options --------------------------------------

// A FIFO whose writer (this object) never writes: a file that never ends.
class SilentFifo {
 public:
  explicit SilentFifo(const std::string& name) : path_(test_dir() + "/" + name + "-" + std::to_string(::getpid())) {
    ::unlink(path_.c_str());
    if (::mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path_);
    writer_ = ::open(path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);  // a writer, without waiting for a reader
  }
  ~SilentFifo() {
    ::close(writer_);
    ::unlink(path_.c_str());
  }
  SilentFifo(const SilentFifo&) = delete;
  SilentFifo& operator=(const SilentFifo&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int writer_ = -1;
};

// The message of a PING through a Client with `tls` (connect timeout 300 ms), in a child process
// that is given up on after 20 s: a read that never ends must fail, not hang the suite.
std::string bounded_failure(const TlsOptions& tls) {
  return in_forked_child([&] {
    ClientOptions options = trusting(tls);
    options.connect_timeout = std::chrono::milliseconds(300);
    try {
      Client(tls_url(), options).ping();
      return std::string("no error");
    } catch (const Error& error) {
      return std::string(errc_name(error.errc())) + ": " + error.what();
    }
  });
}

TEST(Tls, ATlsFileThatNeverEndsFailsAtTheConnectTimeoutNamingItsOption) {
  const SilentFifo fifo("never-ends");
  TlsOptions ca = test_tls();
  ca.ca_file = fifo.path();
  TlsOptions certificate = test_tls();
  certificate.cert_file = fifo.path();
  certificate.key_file = tls_file("client.key");
  TlsOptions key = test_tls();
  key.cert_file = tls_file("client.pem");
  key.key_file = fifo.path();
  for (const auto& [tls, option] : {std::pair{ca, "(--cacert)"}, {certificate, "(--cert)"}, {key, "(--key"}}) {
    const std::string message = bounded_failure(tls);
    EXPECT_THAT(message, HasSubstr("tls: ")) << message;
    EXPECT_THAT(message, HasSubstr("'" + fifo.path() + "' " + option)) << message;
    EXPECT_THAT(message, HasSubstr("it did not end within the connect timeout")) << message;
  }
}

TEST(Tls, ATlsFileTooLargeEmptyOrOfTheWrongKindIsRefusedNamingIt) {
  const std::string empty = test_dir() + "/empty-" + std::to_string(::getpid()) + ".pem";
  std::ofstream(empty).close();
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "(--cacert): more than 4 MiB came"},
      {empty, "(--cacert): it is empty"},
      {test_dir(), "(--cacert): it is a directory (a directory of hashed CAs is --cacertdir)"},
      {tls_file("client.key"), "(--cacert): it holds no PEM certificate"}};
  for (const auto& [path, why] : cases) {
    TlsOptions tls = test_tls();
    tls.ca_file = path;
    const std::string message = bounded_failure(tls);
    EXPECT_THAT(message, HasSubstr("tls: ")) << message;
    EXPECT_THAT(message, HasSubstr("cannot use the CA file '" + path + "' " + why)) << message;
  }
  // A key file that holds no key (the certificate given twice) says so.
  TlsOptions no_key = test_tls();
  no_key.cert_file = tls_file("client.pem");
  no_key.key_file = tls_file("client.pem");
  const std::string message = bounded_failure(no_key);
  EXPECT_THAT(message, HasSubstr("cannot use the client key '" + tls_file("client.pem") +
                                 "' (--key; PEM, not encrypted): it holds no PEM private key"))
      << message;
  std::filesystem::remove(empty);
}

TEST(Tls, ACaDirectoryIsCheckedAndNamed) {
  const auto failure = [](const std::string& directory) {
    TlsOptions tls;
    tls.ca_dir = directory;
    return bounded_failure(tls);
  };
  EXPECT_THAT(failure(test_dir() + "/no-such-dir"),
              HasSubstr("cannot use the CA directory '" + test_dir() + "/no-such-dir' (--cacertdir): No such file"));
  EXPECT_THAT(failure(tls_file("ca.pem")), HasSubstr("(--cacertdir): it is not a directory"));
  // PEM files, but none named by its hash: OpenSSL would never find the CA in it.
  EXPECT_THAT(failure(test_dir() + "/tls"), HasSubstr("(--cacertdir): it holds no certificate named by its hash"));
  EXPECT_THAT(failure(tls_file("other-ca-dir")),
              HasSubstr("unknown CA: no CA in --cacertdir '" + tls_file("other-ca-dir") + "' signed"));
  EXPECT_EQ(failure(tls_file("ca-dir")), "no error");
}

TEST(Tls, APipedCaIsReadOnceAndKeptWhileAFileIsReadAgainAfterAMinute) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const std::string ca = file_text(tls_file("ca.pem"));
  ASSERT_EQ(::write(pipe_fds[1], ca.data(), ca.size()), static_cast<ssize_t>(ca.size()));
  ::close(pipe_fds[1]);
  TlsOptions piped;
  piped.ca_file = "/dev/fd/" + std::to_string(pipe_fds[0]);  // as bash's <(...) names it
  const auto now = std::chrono::steady_clock::now();
  const auto deadline = now + std::chrono::seconds(5);
  const detail::SslContextPtr first = detail::tls_context(piped, deadline, now);
  // A minute later the pipe is empty: reading it again would fail every new connection.
  EXPECT_EQ(detail::tls_context(piped, deadline, now + std::chrono::minutes(2)), first);
  Mutex mutex(Client(tls_url(), trusting(piped)), unique_key(), token_options());
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
  ::close(pipe_fds[0]);

  // A regular file is read again (a renewed CA is picked up without a restart).
  const TlsOptions file = test_tls();
  const detail::SslContextPtr built = detail::tls_context(file, deadline, now + std::chrono::minutes(3));
  EXPECT_NE(detail::tls_context(file, deadline, now + std::chrono::minutes(5)), built);
}

TEST(Tls, TlsSettingsWithoutTlsAreRefusedNotIgnored) {
  ClientOptions options = trusting();
  options.tls.server_name = "redis.example";
  for (const std::string& url : {"redis://:s3cr3t-pw@127.0.0.1:" + std::to_string(tcp_port()), unix_url()}) {
    const Error error = expect_error([&] { Client client(url, options); });
    EXPECT_EQ(error.errc(), Errc::bad_option);
    EXPECT_THAT(error.what(), HasSubstr("TLS settings (--cacert, --sni)"));
    EXPECT_THAT(error.what(), Not(HasSubstr("s3cr3t-pw")));
  }
  options.tls.enabled = true;  // the same settings, TLS on: taken
  EXPECT_NO_THROW(Client("redis://127.0.0.1:" + std::to_string(tls_port()), options));
}

TEST(Tls, APasswordInTheUrlNeverAppearsInAnError) {
  TlsOptions other_ca;
  other_ca.ca_file = tls_file("other-ca.pem");
  const Error error = expect_error(
      [&] { Client("rediss://user:s3cr3t-pw@127.0.0.1:" + std::to_string(tls_port()), trusting(other_ca)).ping(); });
  EXPECT_THAT(error.what(), Not(HasSubstr("s3cr3t-pw")));
  EXPECT_THAT(error.what(), HasSubstr("rediss://user:***@"));
}

// ---- the CLI ----------------------------------------------------------------------------------

TEST(TlsCli, HoldTakesTheLockOverMutualTls) {
  const auto server = ServerProcess::start_tls_server(server_tls("server.pem", "yes"));
  ASSERT_EQ(server->command({"CONFIG", "GET", "port"}), "port 0");  // TLS only, as managed services run
  const std::string url =
      " --url rediss://127.0.0.1:" + std::to_string(server->tls_port()) + " --cacert " + tls_file("ca.pem");
  const CliRun held = run_cli("hold lbtest:cli-mtls --for 0 --json" + url + " --cert " + tls_file("client.pem") +
                                  " --key " + tls_file("client.key"),
                              false);
  EXPECT_EQ(held.exit_code, 0) << held;
  ASSERT_FALSE(held.lines.empty()) << held;
  EXPECT_EQ(held.lines.front()["acquired"], true) << held;

  const CliRun refused = run_cli("hold lbtest:cli-mtls --for 0" + url, false);
  EXPECT_EQ(refused.exit_code, 3) << refused;
  EXPECT_THAT(refused.errors, AnyOf(HasSubstr("wants a client certificate"), HasSubstr("it may require one")));
  EXPECT_THAT(refused.errors, HasSubstr("[tls]"));
}

TEST(TlsCli, InsecureWarnsOnStderr) {
  const CliRun run = run_cli("hold " + unique_key() + " --for 0 --insecure --url " + tls_url(), false);
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.errors, HasSubstr("warning: --insecure"));
}

TEST(TlsCli, TlsSettingsForAPlainUrlAreRefusedBeforeAnythingIsSent) {
  const SilentServer server;
  const std::string settings[] = {"--cacert " + tls_file("ca.pem"), "--cacertdir " + tls_file("ca-dir"),
                                  "--cert " + tls_file("client.pem") + " --key " + tls_file("client.key"),
                                  "--sni redis.example", "--insecure"};
  for (const std::string& given : settings) {
    const CliRun run =
        run_cli("hold " + unique_key() + " --for 0 --url redis://:s3cr3t-pw@" + server.address() + " " + given, false);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("for a connection without TLS")) << run;
    EXPECT_THAT(run.errors, HasSubstr("use a rediss:// URL, or --tls")) << run;
    EXPECT_THAT(run.errors, Not(HasSubstr("s3cr3t-pw"))) << run;
    EXPECT_THAT(run.errors, Not(HasSubstr("warning: --insecure"))) << run;
  }
  EXPECT_FALSE(server.anyone_connected()) << "nothing may be sent in plain text";
  const CliRun empty = run_cli("hold " + unique_key() + " --for 0 --cacert '' --url " + tls_url(), false);
  EXPECT_EQ(empty.exit_code, 2) << empty;
  EXPECT_THAT(empty.errors, HasSubstr("--cacert must not be empty"));
}

TEST(TlsCli, AnInterruptWhileATlsFileIsReadExits130) {
  const SilentFifo fifo("cli-never-ends");
  // 5 s to read it: the interrupt comes well inside that, however loaded the machine.
  BackgroundCli cli(
      "hold " + unique_key() + " --for 0 --connect-timeout 5000 --url " + tls_url() + " --cacert " + fifo.path(),
      false);
  // Once the CLI has the FIFO open, it is waiting for the file to end.
  const auto has_fifo_open = [&] {
    std::error_code ignored;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(cli.pid()) + "/fd", ignored)) {
      if (std::filesystem::read_symlink(fd.path(), ignored) == fifo.path()) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually(has_fifo_open)) << cli.errors();
  ::kill(cli.pid(), SIGINT);
  const CliRun run = cli.finish();
  EXPECT_EQ(run.exit_code, 130) << run;
  EXPECT_THAT(run.errors, HasSubstr("cannot use the CA file '" + fifo.path() + "' (--cacert)")) << run;
}

TEST(TlsCli, TlsFlagsWithoutAServerAreBadUsage) {
  const CliRun run = run_cli("hold " + unique_key() + " --for 0 --tls", false);
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, HasSubstr("--url rediss://"));
}

TEST(TlsCli, ACertificateWithoutItsKeyIsBadUsage) {
  const CliRun run =
      run_cli("hold " + unique_key() + " --for 0 --url " + tls_url() + " --cert " + tls_file("client.pem"), false);
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, HasSubstr("--key"));
}

}  // namespace
}  // namespace lockbridge::testing
