// Racing GMEM output stores. Nothing in a case orders the GMEM writes of different CTAs or Pallas
// threads (nor a thread's stores in flight together), so an output element that two writers leave
// with different values ends with the last writer's value under whatever interleaving ran
// (interpret mode runs them as Python threads, the hardware as it pleases). The prediction leaves
// such an element unwritten: not compared. Stores of one writer, or of the same value, are still
// compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collfuzz::ref {

// Per output element, in Execution's written_ marks: not written (or undefined), written, racy;
// kUntouched marks, during one store, the elements it did not write.
inline constexpr std::uint8_t kOutputNotWritten = 0;
inline constexpr std::uint8_t kOutputWritten = 1;
inline constexpr std::uint8_t kOutputRacy = 2;
inline constexpr std::uint8_t kOutputUntouched = 3;

// Per output element: the store that last wrote it (-1: none), and whether its value was last
// written by stores that nothing orders among themselves (an unordered store that left the value
// as it was: a later store may then race with either of them, not only with the last).
struct OutputWriters {
  std::vector<std::int64_t> last;
  std::vector<std::uint8_t> shared;
};

// After one store by `writer` (a mark naming the store) into an output: `written` holds the marks
// the store left (kOutputUntouched where it wrote nothing), `before` the marks before it,
// `writers` each element's writers (grown to size), `changed(e)` says whether the store changed
// element e's value, and `unordered(w)` whether nothing orders the store after the earlier store
// marked w (another thread's, or one of its own thread still in flight: store groups,
// execution_store_groups.cpp). Restores the untouched marks, marks as racy an element that an
// unordered store wrote before with another value (the last writer, or any of the writers of its
// value when they are unordered among themselves; or already racy), and records the writer.
template <class Changed, class Unordered>
void settle_output_store(std::vector<std::uint8_t>& written,
                         const std::vector<std::uint8_t>& before, OutputWriters& writers,
                         std::int64_t writer, Changed changed, Unordered unordered) {
  writers.last.resize(written.size(), -1);
  writers.shared.resize(written.size(), 0);
  for (std::size_t e = 0; e < written.size(); ++e) {
    if (written[e] == kOutputUntouched) {
      written[e] = before[e];
      continue;
    }
    const bool other =
        writers.shared[e] != 0 || (writers.last[e] >= 0 && unordered(writers.last[e]));
    const bool differs = other && changed(static_cast<std::int64_t>(e));
    if (written[e] == kOutputWritten &&
        (before[e] == kOutputRacy || (other && (before[e] != kOutputWritten || differs))))
      written[e] = kOutputRacy;
    // The same value again from an unordered store: either may be the one a later store races.
    writers.shared[e] = !differs && other ? 1 : 0;
    writers.last[e] = writer;
  }
}

}  // namespace collfuzz::ref
