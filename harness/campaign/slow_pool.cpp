#include "harness/campaign/slow_pool.h"

#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/core/fill.h"

namespace collfuzz::campaign {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return splitmix64(h ^ (v + 0x9e37u)); }

std::uint64_t text_hash(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Bits for the op kinds and copy kinds the body uses: whether a run_scoped is collective over
// the thread axis or over another axis, whether a copy is collective or predicated, whether a
// store reduces or is predicated.
void features(const Body& body, const std::optional<std::string>& thread, std::uint64_t& bits) {
  for (const Op& op : body) {
    // The op's kind: bits 0-7, 24-25 for the ninth and tenth, 30 on for the later ones (bits
    // 8-23 and 26-29 are taken).
    const std::size_t kind = op.v.index();
    bits |= std::uint64_t{1} << (kind < 8 ? kind : kind < 10 ? 24 + (kind - 8) : 30 + (kind - 10));
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const AxisName& a : rs->collective_axes) {
        const bool is_thread = thread && !a.is_tuple && a.as_plain() == *thread;
        bits |= std::uint64_t{1} << (is_thread ? 8 : 9);
      }
      features(rs->body, thread, bits);
    } else if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      bits |= std::uint64_t{1} << (16 + static_cast<int>(cp->leader_tracked));
      if (cp->collective_axes) bits |= std::uint64_t{1} << 20;
      if (cp->predicate) bits |= std::uint64_t{1} << 21;
    } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      if (st->reduction_op) bits |= std::uint64_t{1} << 22;
      if (st->predicate) bits |= std::uint64_t{1} << 23;
      if (!st->wait) bits |= std::uint64_t{1} << 26;
      if (!st->commit_group) bits |= std::uint64_t{1} << 27;
    } else if (const auto* vs = std::get_if<VectorStore>(&op.v)) {
      // Whether its value computes (bit 40), whether its root compares (min or max: 43),
      // converts (44) or is bitwise (and, or, xor: 45), whether it shifts anywhere (46), holds
      // an iota (47) or a broadcast (48), shifts by a computed amount (49), and whether it loads
      // SMEM (41) or an input (42).
      if (!vs->value.args.empty()) bits |= std::uint64_t{1} << 40;
      if (vs->value.kind == VectorKind::kMin || vs->value.kind == VectorKind::kMax)
        bits |= std::uint64_t{1} << 43;
      if (vs->value.kind == VectorKind::kConvert) bits |= std::uint64_t{1} << 44;
      if (is_bitwise(vs->value.kind)) bits |= std::uint64_t{1} << 45;
      if (any_vector_node(vs->value, [](const VectorValue& n) { return is_shift(n.kind); }))
        bits |= std::uint64_t{1} << 46;
      if (any_vector_node(vs->value,
                          [](const VectorValue& n) { return n.kind == VectorKind::kIota; }))
        bits |= std::uint64_t{1} << 47;
      if (any_vector_node(vs->value,
                          [](const VectorValue& n) { return n.kind == VectorKind::kBroadcast; }))
        bits |= std::uint64_t{1} << 48;
      if (any_vector_node(vs->value, [](const VectorValue& n) {
            return is_shift(n.kind) && n.args[1].kind != VectorKind::kConst;
          }))
        bits |= std::uint64_t{1} << 49;
      for_each_vector_load(vs->value, [&](const VectorValue& load) {
        bits |= std::uint64_t{1} << (load.kind == VectorKind::kLoadSmem ? 41 : 42);
        if (!load.cluster_axis.empty()) bits |= std::uint64_t{1} << 50;  // a DSMEM read
      });
    } else if (const auto* ws = std::get_if<WaitSmemToGmem>(&op.v)) {
      if (ws->read_only) bits |= std::uint64_t{1} << 28;
      if (ws->n > 0) bits |= std::uint64_t{1} << 29;
    } else if (const Body* b = nested_body(op)) {
      features(*b, thread, bits);
    }
  }
}

}  // namespace

std::uint64_t behaviour_key(const Outcome& predicted) {
  std::uint64_t h = mix(0, static_cast<std::uint64_t>(predicted.profile));
  h = mix(h, static_cast<std::uint64_t>(predicted.kind));
  if (predicted.diagnostic) return mix(h, text_hash(predicted.diagnostic->rule));
  // An accepted case that leaves a barrier mid-phase (some arrivals of its open phase came, not
  // all) stands at the edge of the rules on pending arrivals: a key of its own.
  for (const CtaRecord& cta : predicted.ctas) {
    for (const BarrierRecord& b : cta.barriers) {
      if (b.pending && b.count && *b.pending > 0 && *b.pending < *b.count) return mix(h, 1);
    }
  }
  return h;
}

std::uint64_t behaviour_class(const Case& c, const Outcome& predicted) {
  std::uint64_t h = behaviour_key(predicted);
  h = mix(h, static_cast<std::uint64_t>(c.target.semantics));
  std::uint64_t bits = 0;
  features(c.program, c.mesh.thread_name, bits);
  if (predicted.diagnostic) {
    // A rejection is its rule and the path that led to it: the collective axes of its scopes
    // (a rule fired by a run_scoped collective over a cluster axis and by one over the thread
    // axis are two paths), the kinds of copy, a predicate; the rest of the case's shape matters
    // little.
    constexpr std::uint64_t kPath =
        (std::uint64_t{1} << 8) | (std::uint64_t{1} << 9) | (std::uint64_t{0x3f} << 16);
    return mix(h, bits & kPath);
  }
  std::uint64_t cluster = 1;
  for (const auto d : c.mesh.cluster) cluster *= static_cast<std::uint64_t>(d);
  h = mix(h, cluster == 1 ? 0 : cluster == 2 ? 1 : 2);  // none, a pair, more
  const std::int64_t threads = c.mesh.num_threads.value_or(0);
  h = mix(h, threads == 0 ? 0 : threads == 1 ? 1 : 2);  // no thread axis, one thread, several
  return mix(h, bits);
}

bool pool_wants_offer(SlowQueue& q, std::uint64_t index) {
  if (q.full.load(std::memory_order_relaxed) < static_cast<std::int64_t>(kSlowQueueSlots / 2))
    return true;
  if (splitmix64(index ^ 0x5eedu) % 64 == 0) return true;
  q.not_offered.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void offer_candidate(SlowQueue& q, std::uint64_t index, std::uint64_t mosaic_class,
                     std::uint64_t interpret_class, std::uint64_t mosaic_key,
                     std::uint64_t interpret_key) {
  q.offered.fetch_add(1, std::memory_order_relaxed);
  SlowCandidate& s = q.slots[splitmix64(index) % kSlowQueueSlots];
  std::uint32_t expected = s.state.load(std::memory_order_acquire);
  if (expected == 1 || expected == 3 ||
      !s.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    q.skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (expected == 2) q.overwritten.fetch_add(1, std::memory_order_relaxed);
  if (expected == 0) q.full.fetch_add(1, std::memory_order_relaxed);
  s.index = index;
  s.klass[0] = mosaic_class;
  s.klass[1] = interpret_class;
  s.key[0] = mosaic_key;
  s.key[1] = interpret_key;
  s.state.store(2, std::memory_order_release);
}

std::int64_t NoveltyPicker::times_seen(Profile p, std::uint64_t klass) const {
  const auto& m = seen_[static_cast<int>(p) & 1];
  const auto it = m.find(klass);
  return it == m.end() ? 0 : it->second;
}

std::int64_t NoveltyPicker::key_seen(Profile p, std::uint64_t key) const {
  const auto& m = keys_seen_[static_cast<int>(p) & 1];
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

std::optional<PickedCase> NoveltyPicker::pick(SlowQueue& q, unsigned profiles) {
  const bool random = random_floor_ > 0 && (picks_ % random_floor_) == random_floor_ - 1;
  // Picks alternate between the two ranks: by key (each rule, each kind of outcome, gets an even
  // share of the executor's time), and by class alone (the least-run behaviour, whatever its key:
  // completed runs, one key, hold most of the classes, and most of the memory semantics).
  const bool by_class = picks_ % 2 == 1;
  std::vector<std::size_t> full;
  std::size_t best = kSlowQueueSlots;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::tuple<std::int64_t, std::int64_t, std::int64_t> best_score{kMax, kMax, kMax};
  for (std::size_t i = 0; i < kSlowQueueSlots; ++i) {
    const SlowCandidate& s = q.slots[i];
    if (s.state.load(std::memory_order_acquire) != 2) continue;
    full.push_back(i);
    if (random) continue;
    // The rarest of its classes over the executors' profiles (a race with a writer only
    // misranks; the candidate is read again after it is taken).
    std::tuple<std::int64_t, std::int64_t, std::int64_t> score{kMax, kMax, kMax};
    for (int p = 0; p < 2; ++p) {
      if (!((profiles >> p) & 1)) continue;
      const auto ms = keys_ms_[p].find(s.key[p]);
      const std::int64_t key_ms = ms == keys_ms_[p].end() ? 0 : ms->second;
      const std::int64_t class_seen = times_seen(Profile(p), s.klass[p]);
      const std::int64_t runs_of_key = key_seen(Profile(p), s.key[p]);
      // A key never run goes first in both ranks: a rule the executor has not been sent yet.
      score = std::min(score,
                       by_class ? std::make_tuple(std::int64_t{runs_of_key > 0}, class_seen, key_ms)
                                : std::make_tuple(key_ms, runs_of_key, class_seen));
    }
    if (score < best_score) {
      best_score = score;
      best = i;
    }
  }
  if (full.empty()) return std::nullopt;
  if (random) {
    rng_ = splitmix64(rng_);
    best = full[rng_ % full.size()];
  }
  SlowCandidate& s = q.slots[best];
  std::uint32_t expected = 2;
  if (!s.state.compare_exchange_strong(expected, 3, std::memory_order_acq_rel)) return std::nullopt;
  PickedCase out;
  out.index = s.index;
  out.klass[0] = s.klass[0];
  out.klass[1] = s.klass[1];
  out.key[0] = s.key[0];
  out.key[1] = s.key[1];
  out.random = random;
  s.state.store(0, std::memory_order_release);
  q.full.fetch_sub(1, std::memory_order_relaxed);
  ++picks_;
  return out;
}

void NoveltyPicker::spent(const PickedCase& c, unsigned profiles, double seconds) {
  for (int p = 0; p < 2; ++p) {
    if ((profiles >> p) & 1) keys_ms_[p][c.key[p]] += static_cast<std::int64_t>(seconds * 1000);
  }
}

void NoveltyPicker::ran(const PickedCase& c, unsigned profiles) {
  for (int p = 0; p < 2; ++p) {
    if ((profiles >> p) & 1) {
      ++seen_[p][c.klass[p]];
      ++keys_seen_[p][c.key[p]];
    }
  }
}

}  // namespace collfuzz::campaign
