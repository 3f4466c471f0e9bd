#include "gpu/framed_outcome.h"

#include <utility>
#include <vector>

#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "harness/core/outcome_json.h"

namespace collfuzz::gpu {
namespace {

using nlohmann::json;

json blob_ref(std::string& blob, const std::vector<std::uint8_t>& bytes) {
  const json ref = json::array({blob.size(), bytes.size()});
  blob.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return ref;
}

std::vector<std::uint8_t> slice(const json& ref, const std::string& blob, const std::string& path) {
  if (!ref.is_array() || ref.size() != 2 || !ref[0].is_number_unsigned() ||
      !ref[1].is_number_unsigned()) {
    throw InputError(path, "expected [offset, size]");
  }
  const auto offset = ref[0].get<std::uint64_t>();
  const auto size = ref[1].get<std::uint64_t>();
  if (offset > blob.size() || size > blob.size() - offset) {
    throw InputError(path, "outside the " + std::to_string(blob.size()) + "-byte blob");
  }
  const auto* first = reinterpret_cast<const std::uint8_t*>(blob.data()) + offset;
  return std::vector<std::uint8_t>(first, first + size);
}

}  // namespace

json outcome_to_framed_json(Outcome&& o, std::string& blob) {
  // Move the bytes out first: outcome_to_json then writes neither hex nor digests for them.
  struct Moved {
    std::size_t cta;
    std::size_t buffer;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Moved> moved;
  for (std::size_t i = 0; i < o.ctas.size(); ++i) {
    for (std::size_t b = 0; b < o.ctas[i].buffers.size(); ++b) {
      BufferRecord& r = o.ctas[i].buffers[b];
      if (!r.observed || r.undefined) continue;
      moved.push_back(Moved{i, b, std::move(r.bytes)});
      r.observed = false;
    }
  }
  std::vector<OutputRecord> outputs = std::move(o.outputs);
  o.outputs.clear();
  json j = outcome_to_json(o, false);
  for (const Moved& m : moved) {
    json& bj = j["ctas"][m.cta]["buffers"][m.buffer];
    bj = json{{"alloc", o.ctas[m.cta].buffers[m.buffer].alloc}, {"blob", blob_ref(blob, m.bytes)}};
  }
  if (!outputs.empty()) {
    json outs = json::array();
    for (const OutputRecord& r : outputs) {
      json written = json::array();
      for (const auto& [b, e] : r.written) written.push_back(json::array({b, e}));
      outs.push_back(
          json{{"name", r.name}, {"blob", blob_ref(blob, r.bytes)}, {"written", written}});
    }
    j["outputs"] = std::move(outs);
  }
  return j;
}

Outcome outcome_from_framed_json(json j, const Case& c, const std::string& blob,
                                 const std::string& path) {
  if (!j.is_object()) throw InputError(path, "expected an object");
  struct Ref {
    std::size_t cta;
    std::size_t buffer;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Ref> refs;
  if (j.contains("ctas") && j["ctas"].is_array()) {
    for (std::size_t i = 0; i < j["ctas"].size(); ++i) {
      json& cta = j["ctas"][i];
      if (!cta.is_object() || !cta.contains("buffers") || !cta["buffers"].is_array()) continue;
      for (std::size_t b = 0; b < cta["buffers"].size(); ++b) {
        json& bj = cta["buffers"][b];
        if (!bj.is_object() || !bj.contains("blob")) continue;
        const std::string bp =
            path + ".ctas[" + std::to_string(i) + "].buffers[" + std::to_string(b) + "]";
        refs.push_back(Ref{i, b, slice(bj["blob"], blob, bp + ".blob")});
        bj.erase("blob");
        bj["observed"] = false;  // restored below, once the bytes are in place
      }
    }
  }
  json outputs = json::array();
  if (j.contains("outputs")) {
    outputs = std::move(j["outputs"]);
    j.erase("outputs");
  }
  Outcome o = outcome_from_json(j, c, path);
  for (Ref& r : refs) {
    BufferRecord& br = o.ctas[r.cta].buffers[r.buffer];
    const Alloc* a = find_alloc(c, br.alloc);
    const auto expected = static_cast<std::size_t>(packed_bytes(element_count(a->shape), a->dtype));
    if (r.bytes.size() != expected) {
      throw InputError(
          path + ".ctas[" + std::to_string(r.cta) + "].buffers[" + std::to_string(r.buffer) +
              "].blob",
          "expected " + std::to_string(expected) + " bytes, got " + std::to_string(r.bytes.size()));
    }
    br.bytes = std::move(r.bytes);
    br.observed = true;
  }
  if (!outputs.is_array()) throw InputError(path + ".outputs", "expected an array");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string op = path + ".outputs[" + std::to_string(i) + "]";
    const json& oj = outputs[i];
    if (!oj.is_object() || !oj.contains("name") || !oj["name"].is_string() ||
        !oj.contains("blob") || !oj.contains("written") || !oj["written"].is_array()) {
      throw InputError(op, "expected {\"name\", \"blob\", \"written\"}");
    }
    OutputRecord r;
    r.name = oj["name"].get<std::string>();
    const ArraySpec* spec = find_array(c.outputs, r.name);
    if (!spec) throw InputError(op + ".name", "no output named \"" + r.name + "\"");
    const std::int64_t n = element_count(spec->shape);
    r.bytes = slice(oj["blob"], blob, op + ".blob");
    if (r.bytes.size() != static_cast<std::size_t>(packed_bytes(n, spec->dtype))) {
      throw InputError(op + ".blob", "wrong number of bytes");
    }
    for (const json& w : oj["written"]) {
      if (!w.is_array() || w.size() != 2 || !w[0].is_number_integer() ||
          !w[1].is_number_integer() || w[0].get<std::int64_t>() < 0 ||
          w[1].get<std::int64_t>() < w[0].get<std::int64_t>() || w[1].get<std::int64_t>() > n) {
        throw InputError(op + ".written", "expected [begin, end] ranges within the output");
      }
      r.written.emplace_back(w[0].get<std::int64_t>(), w[1].get<std::int64_t>());
    }
    o.outputs.push_back(std::move(r));
  }
  return o;
}

}  // namespace collfuzz::gpu
