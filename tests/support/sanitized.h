// Whether this test binary runs under AddressSanitizer (the debug build's clang ASan, or GCC's).
// A few tests that check results over thousands of inputs run a bounded share of them there: the
// release build's ctest runs them all, and the share still puts every code path under the
// sanitizers (docs/performance.md).
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COLLFUZZ_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(COLLFUZZ_TEST_SANITIZED)
#define COLLFUZZ_TEST_SANITIZED 1
#endif

namespace collfuzz::testing {

#ifdef COLLFUZZ_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace collfuzz::testing
