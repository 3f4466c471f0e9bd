#include "gpu/table_emulator.h"

#include <algorithm>
#include <cstring>

#include "gpu/tensor_map_params.h"

namespace collfuzz::gpu {
namespace {

std::uint64_t load_bits(const std::uint8_t* base, std::uint32_t bits, std::uint64_t i) {
  if (bits == 4) return (i % 2) ? (base[i / 2] >> 4) : (base[i / 2] & 0xF);
  std::uint64_t v = 0;
  const std::uint32_t n = bits / 8;
  for (std::uint32_t k = 0; k < n; ++k) v |= std::uint64_t{base[i * n + k]} << (8 * k);
  return v;
}

void store_bits(std::uint8_t* base, std::uint32_t bits, std::uint64_t i, std::uint64_t v) {
  if (bits == 4) {
    std::uint8_t& b = base[i / 2];
    b = (i % 2) ? static_cast<std::uint8_t>((b & 0x0F) | ((v & 0xF) << 4))
                : static_cast<std::uint8_t>((b & 0xF0) | (v & 0xF));
    return;
  }
  const std::uint32_t n = bits / 8;
  for (std::uint32_t k = 0; k < n; ++k) base[i * n + k] = static_cast<std::uint8_t>(v >> (8 * k));
}

struct Mbarrier {
  std::int64_t expected = 1;
  std::int64_t pending = 1;
  std::int64_t tx = 0;
  std::int64_t phase = 0;
  bool over_arrived = false;

  void settle() {
    if (pending == 0 && tx == 0) {
      ++phase;
      pending = expected;
    }
  }
  void arrive(std::int64_t count, std::int64_t bytes) {
    tx += bytes;
    pending -= count;
    if (pending < 0) over_arrived = true;
    settle();
  }
  void complete_tx(std::int64_t bytes) {
    tx -= bytes;
    settle();
  }
};

struct Cta {
  std::vector<std::uint8_t> smem;
  std::vector<Mbarrier> mbars;  // in the case's DevMbar order
  std::vector<std::int32_t> scope_live;
  std::uint32_t arrived = 0;
  std::uint32_t finished = 0;
  std::uint32_t generation = 0;
};

struct Warpgroup {
  std::uint32_t rank = 0;
  std::uint32_t wg = 0;
  DevThread program;
  std::uint32_t pc = 0;
  bool waiting = false;  // blocked inside the current step
  bool done = false;
  std::uint32_t sync_generation = 0;
};

class Cluster {
 public:
  Cluster(const BatchImage& image, const DevCase& c, const std::vector<std::uint8_t>& inputs,
          std::uint8_t* results)
      : img_(image.bytes()), lay_(image.layout()), c_(c), inputs_(inputs), out_(results) {}

  void run() {
    start();
    bool progress = true;
    while (progress) {
      progress = false;
      for (Warpgroup& w : wgs_) progress = advance(w) || progress;
    }
    for (Warpgroup& w : wgs_) {
      if (w.done) continue;
      // The bounded wait runs out: recorded as a timeout; the warpgroup drains.
      const DevStep& s = step(w);
      timeout(s, w.rank);
    }
    // The drain: buffers of scopes still alive are read back as they are now.
    for (std::uint32_t r = 0; r < c_.num_ctas; ++r) {
      for (std::uint32_t s = 0; s < c_.num_scopes; ++s) {
        if (ctas_[r].scope_live[s] > 0) snapshot(r, s);
      }
    }
  }

 private:
  const std::vector<std::uint8_t>& img_;
  const DevTables& lay_;
  const DevCase& c_;
  const std::vector<std::uint8_t>& inputs_;
  std::uint8_t* out_;  // the case's results
  std::vector<Cta> ctas_;
  std::vector<Warpgroup> wgs_;
  std::uint32_t status_ = kStatusRan;

  template <typename T>
  const T& rec(std::uint64_t table, std::uint64_t index) const {
    return *reinterpret_cast<const T*>(img_.data() + table + index * sizeof(T));
  }

  void set_status(std::uint32_t bits) {
    status_ |= bits;
    DevCaseStatus s;
    std::memcpy(&s, out_, sizeof s);
    s.bits = status_;
    std::memcpy(out_, &s, sizeof s);
  }

  void start() {
    ctas_.resize(c_.num_ctas);
    for (Cta& cta : ctas_) {
      cta.smem.assign(c_.smem_bytes, 0);
      std::fill_n(cta.smem.begin(), c_.smem_scratch, std::uint8_t{0xA5});
      for (std::uint32_t m = 0; m < c_.num_mbars; ++m) {
        Mbarrier mb;
        mb.expected = mb.pending = rec<DevMbar>(lay_.mbars, c_.mbar_base + m).count;
        cta.mbars.push_back(mb);
      }
      cta.scope_live.assign(c_.num_scopes, 0);
    }
    for (std::uint32_t r = 0; r < c_.num_ctas; ++r) {
      for (std::uint32_t w = 0; w < c_.threads_per_cta; ++w) {
        Warpgroup wg;
        wg.rank = r;
        wg.wg = w;
        wg.program = rec<DevThread>(lay_.threads, c_.thread_base + r * c_.threads_per_cta + w);
        wgs_.push_back(wg);
      }
    }
    set_status(0);
  }

  const DevStep& step(const Warpgroup& w) const {
    return rec<DevStep>(lay_.steps, c_.step_base + w.program.first_step + w.pc);
  }

  Mbarrier& mbar(std::uint32_t rank, std::uint32_t smem_offset) {
    for (std::uint32_t m = 0; m < c_.num_mbars; ++m) {
      if (rec<DevMbar>(lay_.mbars, c_.mbar_base + m).smem_offset == smem_offset)
        return ctas_[rank].mbars[m];
    }
    // The encoder only emits offsets of initialised mbarriers.
    set_status(kStatusEmulatorUndefined);
    return ctas_[rank].mbars.front();
  }

  void check(const Mbarrier& m) {
    if (m.over_arrived) set_status(kStatusEmulatorUndefined);
  }

  void write_wait(std::uint32_t slot, std::uint32_t status, std::uint64_t word) {
    DevWaitResult r;
    r.status = status;
    r.mbarrier_word = word;
    std::memcpy(out_ + c_.waits_offset + std::uint64_t{slot} * sizeof r, &r, sizeof r);
  }

  void timeout(const DevStep& s, std::uint32_t rank) {
    set_status(kStatusTimeout);
    std::uint64_t word = 0;
    if (s.kind == kOpWait) {
      const Mbarrier& m = mbar(rank, s.mbar);
      word = static_cast<std::uint64_t>(m.phase);
    }
    if (s.slot != kNoSlot) write_wait(s.slot, kWaitTimedOut, word);
  }

  void snapshot(std::uint32_t rank, std::uint32_t scope) {
    const DevScope& sc = rec<DevScope>(lay_.scopes, c_.scope_base + rank * c_.num_scopes + scope);
    for (std::uint32_t k = 0; k < sc.num_buffers; ++k) {
      const DevBuffer& b = rec<DevBuffer>(lay_.buffers, c_.buffer_base + sc.first_buffer + k);
      std::memcpy(out_ + b.result_offset, ctas_[rank].smem.data() + b.smem_offset, b.bytes);
      const std::uint32_t one = 1;
      std::memcpy(out_ + b.flag_offset, &one, sizeof one);
    }
  }

  void release_sync(Cta& cta) {
    if (cta.arrived > 0 && cta.arrived + cta.finished == c_.threads_per_cta) {
      cta.arrived = 0;
      ++cta.generation;
    }
  }

  void load_tensor(std::uint32_t rank, const DevStep& s) {
    const auto& t = rec<TensorMapParams>(lay_.tmaps, c_.tmap_base + s.a);
    const auto e =
        static_cast<std::uint64_t>(tma_element_bytes(static_cast<TmaDataType>(t.data_type)));
    std::uint64_t count = 1;
    for (std::uint32_t i = 0; i < t.rank; ++i) count *= t.box[i];
    std::vector<std::uint8_t> data(count * e, 0);
    for (std::uint64_t n = 0; n < count; ++n) {
      std::uint64_t rem = n;
      bool inside = true;
      std::uint64_t address = t.global_address;
      for (std::uint32_t i = 0; i < t.rank; ++i) {
        const std::int64_t x = s.coords[i] + static_cast<std::int64_t>(rem % t.box[i]);
        rem /= t.box[i];
        inside = inside && x >= 0 && static_cast<std::uint64_t>(x) < t.global_dim[i];
        address += static_cast<std::uint64_t>(x) * (i == 0 ? e : t.global_strides[i - 1]);
      }
      if (inside && address + e <= inputs_.size()) std::memcpy(&data[n * e], &inputs_[address], e);
    }
    deliver(rank, s, data);
  }

  void load_bulk(std::uint32_t rank, const DevStep& s) {
    const std::uint64_t base = rec<std::uint64_t>(lay_.input_offsets, c_.input_base + s.slot);
    const auto src = static_cast<std::int64_t>(base) + static_cast<std::int64_t>(s.c);
    std::vector<std::uint8_t> data(s.a, 0);
    for (std::uint32_t k = 0; k < s.a; ++k) {
      const std::int64_t at = src + k;
      if (at >= 0 && static_cast<std::uint64_t>(at) < inputs_.size())
        data[k] = inputs_[static_cast<std::size_t>(at)];
    }
    deliver(rank, s, data);
  }

  // The data and its complete_tx land in every receiver (the issuer, or the multicast mask).
  void deliver(std::uint32_t rank, const DevStep& s, const std::vector<std::uint8_t>& data) {
    for (std::uint32_t j = 0; j < c_.num_ctas; ++j) {
      const bool receives = (s.flags & kFlagMulticast) ? ((s.mask >> j) & 1u) != 0 : j == rank;
      if (!receives) continue;
      std::memcpy(ctas_[j].smem.data() + s.b, data.data(), data.size());
      Mbarrier& m = mbar((s.flags & kFlagLeader) ? static_cast<std::uint32_t>(s.c) : j, s.mbar);
      m.complete_tx(static_cast<std::int64_t>(data.size()));
    }
  }

  void store(std::uint32_t rank, const DevStore& st) {
    std::int64_t strides[kMaxStoreRank];
    std::int64_t stride = 1;
    for (int k = st.rank - 1; k >= 0; --k) {
      strides[k] = stride;
      stride *= st.dims[k];
    }
    const std::uint8_t* src = ctas_[rank].smem.data() + st.smem_offset;
    for (std::uint64_t j = 0; j < st.elements; ++j) {
      std::uint64_t rem = j;
      std::int64_t index = 0;
      for (int k = st.rank - 1; k >= 0; --k) {
        std::int64_t coord = st.start[k];
        if (st.size[k] != 0) {
          coord += static_cast<std::int64_t>(rem % static_cast<std::uint64_t>(st.size[k]));
          rem /= static_cast<std::uint64_t>(st.size[k]);
        }
        index += coord * strides[k];
      }
      const auto i = static_cast<std::uint64_t>(index);
      store_bits(out_ + st.output_offset, st.elem_bits, i, load_bits(src, st.elem_bits, j));
      out_[st.written_offset + i] = 1;
    }
  }

  // Runs `w` until it blocks or finishes; returns whether it moved.
  bool advance(Warpgroup& w) {
    bool progressed = false;
    Cta& cta = ctas_[w.rank];
    while (!w.done && w.pc < w.program.num_steps) {
      const DevStep& s = step(w);
      switch (s.kind) {
        case kOpScopeEnter:
          if (cta.scope_live[s.a]++ == 0) snapshot(w.rank, s.a);
          break;
        case kOpScopeExit:
          snapshot(w.rank, s.a);
          --cta.scope_live[s.a];
          break;
        case kOpBlockSync:
          if (!w.waiting) {
            w.sync_generation = cta.generation;
            ++cta.arrived;
            release_sync(cta);
          }
          if (cta.generation == w.sync_generation) {
            w.waiting = true;
            return progressed;
          }
          if (s.slot != kNoSlot) write_wait(s.slot, kWaitCompleted, 0);
          break;
        case kOpArrive:
          for (std::uint32_t lane = 0; lane < s.a; ++lane) {
            Mbarrier& m = mbar(w.rank, s.mbar);
            m.arrive(s.b, lane == 0 ? tx_lane0(s.c) : tx_others(s.c));
            check(m);
          }
          break;
        case kOpRemoteArrive:
          for (std::uint32_t j = 0; j < c_.num_ctas; ++j) {
            if (!((s.mask >> j) & 1u)) continue;
            Mbarrier& m = mbar(j, s.mbar);
            m.arrive(1, 0);
            check(m);
          }
          break;
        case kOpCompleteTx:
          mbar(w.rank, s.mbar).complete_tx(static_cast<std::int64_t>(s.c));
          break;
        case kOpLoadTensor:
          if (s.flags & kFlagPredicate) load_tensor(w.rank, s);
          break;
        case kOpLoadBulk:
          if (s.flags & kFlagPredicate) load_bulk(w.rank, s);
          break;
        case kOpStore:
          store(w.rank, rec<DevStore>(lay_.stores, c_.store_base + s.a));
          break;
        case kOpWait: {
          const Mbarrier& m = mbar(w.rank, s.mbar);
          if ((m.phase & 1) == static_cast<std::int64_t>(s.a & 1)) {
            w.waiting = true;
            return progressed;
          }
          write_wait(s.slot, kWaitCompleted, 0);
          break;
        }
        default:
          set_status(kStatusBadGeometry);
          w.done = true;
          return true;
      }
      w.waiting = false;
      ++w.pc;
      progressed = true;
    }
    if (!w.done) {
      w.done = true;
      ++cta.finished;
      release_sync(cta);
      progressed = true;
    }
    return progressed;
  }
};

}  // namespace

void emulate_batch(const BatchImage& image, const std::vector<std::uint8_t>& inputs,
                   std::vector<std::uint8_t>& results) {
  results.assign(image.results_bytes(), 0);
  const auto* cases = table<DevCase>(image.bytes(), image.layout().cases);
  for (std::uint32_t i = 0; i < image.num_cases(); ++i) {
    Cluster(image, cases[i], inputs, results.data() + cases[i].results_base).run();
  }
}

}  // namespace collfuzz::gpu
