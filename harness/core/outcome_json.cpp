#include "harness/core/outcome_json.h"

#include <array>
#include <memory>

#include "harness/core/case_parser.h"
#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/message_regex.h"
#include "harness/core/ndarray.h"
#include "harness/core/smem_layout.h"

namespace collfuzz {

using nlohmann::json;

namespace {

constexpr std::array<std::pair<std::string_view, OutcomeKind>, 7> kKinds = {{
    {"rejected", OutcomeKind::kRejected},
    {"completed", OutcomeKind::kCompleted},
    {"deadlock", OutcomeKind::kDeadlock},
    {"timeout", OutcomeKind::kTimeout},
    {"crash", OutcomeKind::kCrash},
    {"unavailable", OutcomeKind::kUnavailable},
    {"undefined", OutcomeKind::kUndefined},
}};

const Alloc* find_in(const Body& body, const std::string& name) {
  for (const auto& op : body) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const auto& a : rs->allocs) {
        if (a.name == name) return &a;
      }
      if (const Alloc* a = find_in(rs->body, name)) return a;
    } else if (const Body* b = nested_body(op)) {
      if (const Alloc* a = find_in(*b, name)) return a;
    }
  }
  return nullptr;
}

std::vector<std::uint8_t> from_hex(const std::string& s, const std::string& path) {
  if (s.size() % 2) throw InputError(path, "hex string has an odd number of digits");
  std::vector<std::uint8_t> out(s.size() / 2);
  auto digit = [&](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    throw InputError(path, std::string("not a hex digit: '") + ch + "'");
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(digit(s[2 * i]) * 16 + digit(s[2 * i + 1]));
  }
  return out;
}

// Writes the regions of `j` (an array of {"at": [...], "from": {...}}, {"at": [...], "zeros":
// [shape]} or {"at": [...], "shape": [...], "values": [numbers, row-major]}) into `buf`, an array
// of `shape` and `dtype`, marking written elements in `written`.
void apply_regions(const json& j, const std::string& path, const Case& c, const Shape& shape,
                   DType dtype, std::vector<std::uint8_t>& buf, std::vector<bool>& written) {
  jr::array(j, path, 4096);
  const auto dst_strides = row_major_strides(shape);
  for (std::size_t r = 0; r < j.size(); ++r) {
    const std::string rp = jr::index_path(path, r);
    jr::object(j[r], rp, {"at", "from", "zeros", "shape", "values"});
    const json& at_j = jr::required(j[r], rp, "at");
    jr::array(at_j, rp + ".at", shape.size());
    if (at_j.size() != shape.size())
      throw InputError(rp + ".at", "needs one offset per dimension of the buffer");
    std::vector<std::int64_t> at;
    for (std::size_t i = 0; i < at_j.size(); ++i) {
      at.push_back(jr::integer(at_j[i], jr::index_path(rp + ".at", i), 0, shape[i] - 1));
    }
    std::function<std::uint64_t(const std::vector<std::int64_t>&)> value;
    Shape box;
    ResolvedSlice slice;
    const ArraySpec* src = nullptr;
    std::vector<std::int64_t> src_strides;
    std::vector<std::size_t> region_transpose;  // "from": {"transpose": ...}
    if (const json* z = jr::member(j[r], "zeros")) {
      jr::array(*z, rp + ".zeros", shape.size());
      for (std::size_t i = 0; i < z->size(); ++i) {
        box.push_back(jr::integer((*z)[i], jr::index_path(rp + ".zeros", i), 1, shape[i]));
      }
      value = [](const std::vector<std::int64_t>&) -> std::uint64_t { return 0; };
    } else if (const json* vs = jr::member(j[r], "values")) {
      // Values written out by hand (a reduction's results): the box's elements, row-major.
      const json& sj = jr::required(j[r], rp, "shape");
      jr::array(sj, rp + ".shape", shape.size());
      for (std::size_t i = 0; i < sj.size(); ++i) {
        box.push_back(jr::integer(sj[i], jr::index_path(rp + ".shape", i), 1, shape[i]));
      }
      const std::int64_t n = element_count(box);
      jr::array(*vs, rp + ".values", static_cast<std::size_t>(limits::kMaxFillValues));
      if (static_cast<std::int64_t>(vs->size()) != n) {
        throw InputError(rp + ".values", "holds " + std::to_string(vs->size()) +
                                             " values for a region of " + std::to_string(n));
      }
      auto bits = std::make_shared<std::vector<std::uint64_t>>();
      for (std::size_t i = 0; i < vs->size(); ++i) {
        bits->push_back(case_json::value_bits((*vs)[i], jr::index_path(rp + ".values", i), dtype));
      }
      const auto box_strides = row_major_strides(box);
      value = [bits, box_strides](const std::vector<std::int64_t>& coord) -> std::uint64_t {
        std::int64_t k = 0;
        for (std::size_t i = 0; i < coord.size(); ++i) k += coord[i] * box_strides[i];
        return (*bits)[static_cast<std::size_t>(k)];
      };
    } else {
      const json& from = jr::required(j[r], rp, "from");
      const std::string fp = rp + ".from";
      jr::object(from, fp, {"input", "index", "transpose"});
      const std::string& name = jr::identifier(jr::required(from, fp, "input"), fp + ".input");
      src = find_array(c.inputs, name);
      if (!src) throw InputError(fp + ".input", "no input named \"" + name + "\"");
      if (src->dtype != dtype)
        throw InputError(fp + ".input", "the input's dtype differs from the buffer's");
      std::vector<IndexEntry> index;
      if (const json* ij = jr::member(from, "index")) {
        jr::array(*ij, fp + ".index", src->shape.size());
        for (std::size_t i = 0; i < ij->size(); ++i) {
          const std::string ip = jr::index_path(fp + ".index", i);
          IndexEntry e;
          if ((*ij)[i].is_number()) {
            e.kind = IndexEntry::Kind::kAt;
            e.at = jr::integer((*ij)[i], ip, 0, src->shape[i] - 1);
          } else {
            jr::object((*ij)[i], ip, {"start", "size"});
            e.start = jr::integer(jr::required((*ij)[i], ip, "start"), ip + ".start", 0,
                                  src->shape[i] - 1);
            e.size = jr::integer(jr::required((*ij)[i], ip, "size"), ip + ".size", 1,
                                 src->shape[i] - e.start);
          }
          index.push_back(e);
        }
      }
      slice = resolve_slice(
          src->shape, index, [](const std::string&) { return 0; }, 0);
      box = slice.shape;
      src_strides = row_major_strides(src->shape);
      // {"transpose": p}: the region holds the slice transposed as numpy's x.transpose(p) does,
      // its dim k the slice's dim p[k].
      if (const json* tj = jr::member(from, "transpose")) {
        const std::string tp = fp + ".transpose";
        jr::array(*tj, tp, box.size());
        if (tj->size() != box.size())
          throw InputError(tp, "needs one entry per dimension of the slice");
        std::vector<bool> seen(box.size(), false);
        for (std::size_t k = 0; k < tj->size(); ++k) {
          const auto d = static_cast<std::size_t>(jr::integer(
              (*tj)[k], jr::index_path(tp, k), 0, static_cast<std::int64_t>(box.size()) - 1));
          if (seen[d]) throw InputError(jr::index_path(tp, k), "a dimension appears twice");
          seen[d] = true;
          region_transpose.push_back(d);
        }
        Shape permuted;
        for (const std::size_t d : region_transpose) permuted.push_back(box[d]);
        box = permuted;
      }
    }
    // A slice of lower rank fills the buffer's trailing dims, its leading ones of size 1 (a
    // copy into buf.at[i]).
    std::size_t lead = 0;
    if (src && box.size() < shape.size()) {
      lead = shape.size() - box.size();
      box.insert(box.begin(), lead, 1);
    }
    if (box.size() != shape.size())
      throw InputError(rp, "the region's rank differs from the buffer's");
    for (std::size_t i = 0; i < box.size(); ++i) {
      if (at[i] + box[i] > shape[i])
        throw InputError(rp, "the region does not fit inside the buffer");
    }
    for_each_coord(box, [&](const std::vector<std::int64_t>& coord) {
      std::int64_t d = 0;
      for (std::size_t i = 0; i < coord.size(); ++i) d += (at[i] + coord[i]) * dst_strides[i];
      std::uint64_t bits = 0;
      if (src) {
        // The slice's coordinates: the region's past the leading dims it adds, untransposed.
        std::vector<std::int64_t> kept(coord.begin() + static_cast<std::ptrdiff_t>(lead),
                                       coord.end());
        for (std::size_t k = 0; k < region_transpose.size(); ++k)
          kept[region_transpose[k]] = coord[lead + k];
        std::int64_t s = 0;
        std::size_t k = 0;
        for (std::size_t i = 0; i < src->shape.size(); ++i) {
          const std::int64_t ci = slice.size[i] == 0 ? 0 : kept[k++];
          s += (slice.start[i] + ci) * src_strides[i];
        }
        bits = fill_element_bits(*src, s);
      } else {
        bits = value(coord);
      }
      store_element(buf, dtype, d, bits);
      written[static_cast<std::size_t>(d)] = true;
    });
  }
}

std::optional<std::int64_t> opt_int(const json& j, const std::string& path, std::string_view key) {
  const json* m = jr::member(j, key);
  if (!m || m->is_null()) return std::nullopt;
  return jr::integer(*m, jr::key_path(path, key), -(std::int64_t{1} << 62), std::int64_t{1} << 62);
}

}  // namespace

const char* to_string(OutcomeKind k) {
  for (const auto& [name, kind] : kKinds) {
    if (kind == k) return name.data();
  }
  return "?";
}

std::optional<OutcomeKind> parse_outcome_kind(std::string_view s) {
  for (const auto& [name, kind] : kKinds) {
    if (name == s) return kind;
  }
  return std::nullopt;
}

std::string digest_hex(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (auto b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

const Alloc* find_alloc(const Case& c, const std::string& name) { return find_in(c.program, name); }

const ArraySpec* find_array(const std::vector<ArraySpec>& arrays, const std::string& name) {
  for (const auto& a : arrays) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

json outcome_to_json(const Outcome& o, bool with_bytes) {
  json out;
  out["kind"] = to_string(o.kind);
  out["profile"] = to_string(o.profile);
  if (!o.executor.empty()) out["executor"] = o.executor;
  if (!o.reason.empty()) out["reason"] = o.reason;
  if (!o.info.empty()) out["info"] = o.info;
  if (!o.traceback.empty()) out["traceback"] = o.traceback;
  if (o.diagnostic) {
    const Diagnostic& d = *o.diagnostic;
    out["diagnostic"] = json{{"stage", d.stage}, {"exception", d.exception}};
    if (d.message_regex.empty()) {
      out["diagnostic"]["message"] = d.message;
    } else {
      out["diagnostic"]["message_regex"] = d.message_regex;
    }
    if (!d.rule.empty()) out["diagnostic"]["rule"] = d.rule;
    if (!d.op.empty()) out["diagnostic"]["op"] = d.op;
    if (!d.alternatives.empty()) {
      json alts = json::array();
      for (const DiagnosticAlternative& a : d.alternatives) {
        json aj{{"exception", a.exception}, {"message", a.message}};
        if (!a.rule.empty()) aj["rule"] = a.rule;
        if (!a.op.empty()) aj["op"] = a.op;
        alts.push_back(std::move(aj));
      }
      out["diagnostic"]["alternatives"] = std::move(alts);
    }
    if (d.may_complete) out["diagnostic"]["may_complete"] = true;
  }
  if (o.undefined) out["undefined"] = undefined_record_to_json(*o.undefined);
  if (!o.ctas.empty()) {
    json ctas = json::array();
    for (const auto& cta : o.ctas) {
      json cj{{"rank", cta.rank}, {"coords", cta.coords}};
      json bars = json::array();
      for (const auto& b : cta.barriers) {
        json bj{{"alloc", b.alloc}, {"index", b.index}};
        auto put = [&](const char* k, const std::optional<std::int64_t>& v) {
          if (v) bj[k] = *v;
        };
        put("count", b.count);
        put("arrivals", b.arrivals);
        put("armed", b.armed);
        put("received", b.received);
        put("phases", b.phases);
        put("pending", b.pending);
        put("tx", b.tx);
        bars.push_back(bj);
      }
      cj["barriers"] = bars;
      json waits = json::array();
      for (const auto& w : cta.waits) {
        waits.push_back(json{{"thread", w.thread},
                             {"op", w.op},
                             {"barrier", w.barrier},
                             {"phase", w.phase},
                             {"completed", w.completed}});
      }
      cj["waits"] = waits;
      json bufs = json::array();
      for (const auto& b : cta.buffers) {
        json bj{{"alloc", b.alloc}};
        if (!b.observed) {
          bj["observed"] = false;
        } else if (b.undefined) {
          bj["undefined"] = true;
        } else {
          bj["digest"] = digest_hex(b.bytes);
          if (with_bytes) bj["hex"] = to_hex(b.bytes);
        }
        bufs.push_back(bj);
      }
      cj["buffers"] = bufs;
      ctas.push_back(cj);
    }
    out["ctas"] = ctas;
  }
  if (!o.outputs.empty()) {
    json outs = json::array();
    for (const auto& r : o.outputs) {
      json rj{{"name", r.name}, {"digest", digest_hex(r.bytes)}};
      if (with_bytes) rj["hex"] = to_hex(r.bytes);
      json w = json::array();
      for (const auto& [b, e] : r.written) w.push_back(json::array({b, e}));
      rj["written"] = w;
      outs.push_back(rj);
    }
    out["outputs"] = outs;
  }
  return out;
}

Outcome outcome_from_json(const json& j, const Case& c, const std::string& path) {
  jr::object(j, path,
             {"kind", "profile", "executor", "reason", "info", "diagnostic", "ctas", "outputs",
              "traceback", "undefined"});
  Outcome o;
  const std::string& kind = jr::string(jr::required(j, path, "kind"), path + ".kind", 32);
  auto k = parse_outcome_kind(kind);
  if (!k) throw InputError(path + ".kind", "unknown outcome kind \"" + kind + "\"");
  o.kind = *k;
  if (const json* p = jr::member(j, "profile")) {
    const std::string& s = jr::string(*p, path + ".profile", 32);
    if (s == "mosaic") {
      o.profile = Profile::kMosaic;
    } else if (s == "interpret") {
      o.profile = Profile::kInterpret;
    } else {
      throw InputError(path + ".profile", "expected \"mosaic\" or \"interpret\"");
    }
  } else {
    o.profile = c.target.profile;
  }
  if (const json* e = jr::member(j, "executor"))
    o.executor = jr::string(*e, path + ".executor", 64);
  if (const json* r = jr::member(j, "reason")) o.reason = jr::string(*r, path + ".reason", 1 << 16);
  if (const json* t = jr::member(j, "traceback"))
    o.traceback = jr::string(*t, path + ".traceback", kMaxTracebackBytes);
  if (const json* info = jr::member(j, "info")) {
    if (!info->is_object()) throw InputError(path + ".info", "expected an object");
    if (info->size() > 64) throw InputError(path + ".info", "too many entries");
    for (const auto& [key, value] : info->items()) {
      o.info[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  if (const json* d = jr::member(j, "diagnostic")) {
    const std::string dp = path + ".diagnostic";
    jr::object(*d, dp,
               {"stage", "exception", "message", "message_regex", "rule", "op", "alternatives",
                "may_complete"});
    Diagnostic diag;
    // The stage may be left out (an expectation a JAX author writes: exception and message), or
    // be a JAX stage (stage_names.h).
    if (const json* st = jr::member(*d, "stage")) diag.stage = jr::string(*st, dp + ".stage", 32);
    diag.exception = jr::string(jr::required(*d, dp, "exception"), dp + ".exception", 128);
    // `message`, or `message_regex` (a JAX test's assertRaisesRegex), exactly one of them.
    if (const json* re = jr::member(*d, "message_regex")) {
      if (jr::member(*d, "message")) {
        throw InputError(dp + ".message_regex", "give either message or message_regex, not both");
      }
      diag.message_regex = jr::string(*re, dp + ".message_regex", kMaxMessageRegexBytes);
      check_message_regex(diag.message_regex, dp + ".message_regex");
    } else {
      diag.message = jr::string(jr::required(*d, dp, "message"), dp + ".message", 1 << 16);
    }
    if (const json* r = jr::member(*d, "rule")) diag.rule = jr::string(*r, dp + ".rule", 128);
    if (const json* op = jr::member(*d, "op")) diag.op = jr::string(*op, dp + ".op", 512);
    if (const json* alts = jr::member(*d, "alternatives")) {
      jr::array(*alts, dp + ".alternatives", limits::kMaxDiagnosticAlternatives);
      for (std::size_t i = 0; i < alts->size(); ++i) {
        const std::string ap = jr::index_path(dp + ".alternatives", i);
        const json& aj = (*alts)[i];
        jr::object(aj, ap, {"exception", "message", "rule", "op"});
        DiagnosticAlternative a;
        a.exception = jr::string(jr::required(aj, ap, "exception"), ap + ".exception", 128);
        a.message = jr::string(jr::required(aj, ap, "message"), ap + ".message", 1 << 16);
        if (const json* r = jr::member(aj, "rule")) a.rule = jr::string(*r, ap + ".rule", 128);
        if (const json* op = jr::member(aj, "op")) a.op = jr::string(*op, ap + ".op", 512);
        diag.alternatives.push_back(std::move(a));
      }
    }
    if (const json* mc = jr::member(*d, "may_complete"))
      diag.may_complete = jr::boolean(*mc, dp + ".may_complete");
    o.diagnostic = diag;
  }
  if (o.kind == OutcomeKind::kRejected && !o.diagnostic) {
    throw InputError(path + ".diagnostic", "a rejected outcome needs a diagnostic");
  }
  if (const json* u = jr::member(j, "undefined"))
    o.undefined = undefined_record_from_json(*u, path + ".undefined");
  if (o.kind == OutcomeKind::kUndefined && !o.undefined) {
    throw InputError(path + ".undefined",
                     "an undefined outcome needs its undefined-behaviour code");
  }
  if (const json* ctas = jr::member(j, "ctas")) {
    jr::array(*ctas, path + ".ctas", 64);
    for (std::size_t i = 0; i < ctas->size(); ++i) {
      const std::string cp = jr::index_path(path + ".ctas", i);
      const json& cj = (*ctas)[i];
      jr::object(cj, cp, {"rank", "coords", "barriers", "waits", "buffers"});
      CtaRecord cta;
      cta.rank = jr::integer(jr::required(cj, cp, "rank"), cp + ".rank", 0, 63);
      if (const json* co = jr::member(cj, "coords")) {
        jr::array(*co, cp + ".coords", 8);
        for (std::size_t k2 = 0; k2 < co->size(); ++k2) {
          cta.coords.push_back(jr::integer((*co)[k2], jr::index_path(cp + ".coords", k2), 0, 63));
        }
      }
      if (const json* bars = jr::member(cj, "barriers")) {
        jr::array(*bars, cp + ".barriers", 1 << 16);
        for (std::size_t b = 0; b < bars->size(); ++b) {
          const std::string bp = jr::index_path(cp + ".barriers", b);
          const json& bj = (*bars)[b];
          jr::object(bj, bp,
                     {"alloc", "index", "count", "arrivals", "armed", "received", "phases",
                      "pending", "tx"});
          BarrierRecord br;
          br.alloc = jr::identifier(jr::required(bj, bp, "alloc"), bp + ".alloc");
          if (const json* ix = jr::member(bj, "index"))
            br.index = jr::integer(*ix, bp + ".index", 0, 1 << 20);
          br.count = opt_int(bj, bp, "count");
          br.arrivals = opt_int(bj, bp, "arrivals");
          br.armed = opt_int(bj, bp, "armed");
          br.received = opt_int(bj, bp, "received");
          br.phases = opt_int(bj, bp, "phases");
          br.pending = opt_int(bj, bp, "pending");
          br.tx = opt_int(bj, bp, "tx");
          cta.barriers.push_back(br);
        }
      }
      if (const json* waits = jr::member(cj, "waits")) {
        jr::array(*waits, cp + ".waits", 1 << 16);
        for (std::size_t w = 0; w < waits->size(); ++w) {
          const std::string wp = jr::index_path(cp + ".waits", w);
          const json& wj = (*waits)[w];
          jr::object(wj, wp, {"thread", "op", "barrier", "phase", "completed"});
          WaitRecord wr;
          wr.thread = jr::integer(jr::required(wj, wp, "thread"), wp + ".thread", 0, 63);
          wr.op = jr::string(jr::required(wj, wp, "op"), wp + ".op", 512);
          if (const json* b = jr::member(wj, "barrier"))
            wr.barrier = jr::string(*b, wp + ".barrier", 128);
          if (const json* ph = jr::member(wj, "phase"))
            wr.phase = jr::integer(*ph, wp + ".phase", 0, 1 << 20);
          wr.completed = jr::boolean(jr::required(wj, wp, "completed"), wp + ".completed");
          cta.waits.push_back(wr);
        }
      }
      if (const json* bufs = jr::member(cj, "buffers")) {
        jr::array(*bufs, cp + ".buffers", 1024);
        for (std::size_t b = 0; b < bufs->size(); ++b) {
          const std::string bp = jr::index_path(cp + ".buffers", b);
          const json& bj = (*bufs)[b];
          jr::object(bj, bp, {"alloc", "hex", "digest", "regions", "undefined", "observed"});
          BufferRecord br;
          br.alloc = jr::identifier(jr::required(bj, bp, "alloc"), bp + ".alloc");
          const Alloc* a = find_alloc(c, br.alloc);
          if (!a || a->kind != AllocKind::kSmem) {
            throw InputError(bp + ".alloc",
                             "no smem allocation named \"" + br.alloc + "\" in the case");
          }
          const std::int64_t n = element_count(a->shape);
          const auto nbytes = static_cast<std::size_t>(packed_bytes(n, a->dtype));
          if (const json* ob = jr::member(bj, "observed"))
            br.observed = jr::boolean(*ob, bp + ".observed");
          if (const json* u = jr::member(bj, "undefined"))
            br.undefined = jr::boolean(*u, bp + ".undefined");
          if (const json* h = jr::member(bj, "hex")) {
            br.bytes = from_hex(jr::string(*h, bp + ".hex", 1 << 26), bp + ".hex");
            if (br.bytes.size() != nbytes) {
              throw InputError(bp + ".hex", "expected " + std::to_string(nbytes) + " bytes, got " +
                                                std::to_string(br.bytes.size()));
            }
          } else if (const json* regions = jr::member(bj, "regions")) {
            br.bytes.assign(nbytes, kSmemSentinel);
            std::vector<bool> written(static_cast<std::size_t>(n), false);
            apply_regions(*regions, bp + ".regions", c, a->shape, a->dtype, br.bytes, written);
            // Regions are written in the ref's logical coordinates; the bytes are physical.
            br.bytes = to_physical(smem_layout(*a), br.bytes);
          } else if (br.observed && !br.undefined) {
            throw InputError(bp,
                             "a buffer needs \"hex\", \"regions\", \"undefined\": true or "
                             "\"observed\": false");
          }
          if (const json* dg = jr::member(bj, "digest"); dg && br.observed && !br.undefined) {
            const std::string& want = jr::string(*dg, bp + ".digest", 64);
            if (want != digest_hex(br.bytes)) {
              throw InputError(bp + ".digest", "the digest does not match the bytes (" +
                                                   digest_hex(br.bytes) + ")");
            }
          }
          cta.buffers.push_back(std::move(br));
        }
      }
      o.ctas.push_back(std::move(cta));
    }
  }
  if (const json* outs = jr::member(j, "outputs")) {
    jr::array(*outs, path + ".outputs", 64);
    for (std::size_t i = 0; i < outs->size(); ++i) {
      const std::string op = jr::index_path(path + ".outputs", i);
      const json& oj = (*outs)[i];
      jr::object(oj, op, {"name", "hex", "digest", "written", "regions"});
      OutputRecord r;
      r.name = jr::identifier(jr::required(oj, op, "name"), op + ".name");
      const ArraySpec* spec = find_array(c.outputs, r.name);
      if (!spec) throw InputError(op + ".name", "no output named \"" + r.name + "\"");
      const std::int64_t n = element_count(spec->shape);
      const auto nbytes = static_cast<std::size_t>(packed_bytes(n, spec->dtype));
      if (const json* regions = jr::member(oj, "regions")) {
        r.bytes.assign(nbytes, 0);
        std::vector<bool> written(static_cast<std::size_t>(n), false);
        apply_regions(*regions, op + ".regions", c, spec->shape, spec->dtype, r.bytes, written);
        for (std::int64_t e = 0; e < n;) {
          if (!written[static_cast<std::size_t>(e)]) {
            ++e;
            continue;
          }
          std::int64_t b = e;
          while (e < n && written[static_cast<std::size_t>(e)]) ++e;
          r.written.emplace_back(b, e);
        }
      } else {
        r.bytes =
            from_hex(jr::string(jr::required(oj, op, "hex"), op + ".hex", 1 << 27), op + ".hex");
        if (r.bytes.size() != nbytes) throw InputError(op + ".hex", "wrong number of bytes");
        const json& w = jr::required(oj, op, "written");
        jr::array(w, op + ".written", 1 << 20);
        for (std::size_t k2 = 0; k2 < w.size(); ++k2) {
          const std::string wp = jr::index_path(op + ".written", k2);
          jr::array(w[k2], wp, 2);
          if (w[k2].size() != 2) throw InputError(wp, "expected [begin, end]");
          const auto b = jr::integer(w[k2][0], wp + "[0]", 0, n);
          const auto e = jr::integer(w[k2][1], wp + "[1]", b, n);
          r.written.emplace_back(b, e);
        }
      }
      o.outputs.push_back(std::move(r));
    }
  }
  return o;
}

}  // namespace collfuzz
