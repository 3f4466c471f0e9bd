// The reference's SMEM writes with race tracking (smem_races.h) and against pending store reads
// (execution_store_groups.cpp): the member templates of Execution that the copies and the vector
// stores use. Internal to oracles/reference.
#pragma once

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

template <class Write>
void Execution::guarded_write(Memory& m, std::size_t at, std::size_t n, Write write) {
  if (store_reads_.empty() || !meets_store_read(m, at, n)) {
    claim_write(m, at, n, write);
    return;
  }
  const auto first = static_cast<std::ptrdiff_t>(at);
  const auto last = static_cast<std::ptrdiff_t>(at + n);
  store_read_before_.assign(m.bytes.begin() + first, m.bytes.begin() + last);
  store_read_undef_before_.assign(m.undef.begin() + first, m.undef.begin() + last);
  claim_write(m, at, n, write);
  settle_store_reads(m, at, n, store_read_before_, store_read_undef_before_);
}

template <class Write>
void Execution::claim_write(Memory& m, std::size_t at, std::size_t n, Write write) {
  if (m.writers.empty()) {
    if (!smem_spans_meet_another(m.spans, at, at + n, writer_)) {
      write();
      smem_add_span(m.spans, at, at + n, writer_);
      if (m.spans.size() > kSmemMaxSpans) smem_writers_of(m.spans, m.writers, m.bytes.size());
      return;
    }
    smem_writers_of(m.spans, m.writers, m.bytes.size());
  }
  std::uint16_t* const w = m.writers.data() + at;
  if (!smem_other_writer(w, n, writer_)) {
    write();
    std::fill_n(w, n, writer_);
    return;
  }
  race_before_.assign(m.bytes.begin() + static_cast<std::ptrdiff_t>(at),
                      m.bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
  write();
  if (settle_smem_write(w, m.undef.data() + at, race_before_.data(), m.bytes.data() + at, n,
                        writer_))
    m.any_undef = true;
}

}  // namespace collfuzz::ref::exec
