// ThreadSanitizer's suppressions for the test programs, built in (no TSAN_OPTIONS to pass around).
// Only races inside other projects' libraries, each with why it is not ours to fix.
#if defined(__SANITIZE_THREAD__)
#define LOCKBRIDGE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKBRIDGE_TSAN 1
#endif
#endif

#ifdef LOCKBRIDGE_TSAN
// CivetWeb (under prometheus-cpp's HTTP server), as Debian builds it (without REENTRANT_TIME),
// formats the Date header with gmtime(), whose result is one static buffer: two of its worker
// threads answering at once (PrometheusMetrics.AnIdleOrSlowClientDoesNotHoldUpAScrape: idle
// clients timed out together) race on it. The worst it does is a garbled Date header.
extern "C" const char* __tsan_default_suppressions() { return "race:libcivetweb.so\n"; }
#endif
