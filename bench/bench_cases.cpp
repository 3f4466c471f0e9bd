#include "bench/bench_cases.h"

#include <nlohmann/json.hpp>

#include "harness/core/case_json.h"

namespace collfuzz::bench {

Case multicast_tile_case(std::int64_t tile_bytes, std::int64_t ctas) {
  const std::int64_t rows = tile_bytes / (64 * 4);
  nlohmann::json copy = {{"op", "copy_gmem_to_smem"},
                         {"src", {{"input", "x"}}},
                         {"dst", {{"alloc", "dst"}}},
                         {"barrier", {{"alloc", "bar"}}}};
  nlohmann::json mesh = nlohmann::json::object();
  if (ctas > 1) {
    copy["collective_axes"] = "x";
    mesh = {{"cluster", {ctas}}, {"cluster_names", {"x"}}};
  }
  const nlohmann::json j = {
      {"format", 1},
      {"name", "bench"},
      {"mesh", mesh},
      {"target", {{"arch", "sm_90a"}, {"semantics", "lane"}}},
      {"inputs", {{{"name", "x"}, {"shape", {rows, 64}}, {"dtype", "float32"}}}},
      {"program",
       {{{"op", "run_scoped"},
         {"allocs",
          {{{"name", "dst"}, {"kind", "smem"}, {"shape", {rows, 64}}, {"dtype", "float32"}},
           {{"name", "bar"}, {"kind", "barrier"}}}},
         {"body", {copy, {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}}}}}}}};
  return case_from_json(j);
}

Case reused_barrier_case(std::int64_t steps, bool as_loop, bool tiled, bool nd) {
  // Tile k of x (rows 16k..16k+15): pl.ds(i * 16, 16) in the loop, pl.ds(16 * k, 16) unrolled.
  const auto copy = [&](const nlohmann::json& start) {
    nlohmann::json c = {{"op", "copy_gmem_to_smem"},
                        {"src", {{"input", "x"}}},
                        {"dst", {{"alloc", "dst"}}},
                        {"barrier", {{"alloc", "bar"}}},
                        {"collective_axes", "x"}};
    if (tiled) c["src"]["index"] = {{{"start", start}, {"size", 16}}};
    return c;
  };
  const nlohmann::json wait = {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}};
  nlohmann::json body = nlohmann::json::array();
  if (as_loop) {
    nlohmann::json loop = {{"op", "loop"},
                           {"trip_count", steps},
                           {"body", {copy({{"loop", "i"}, {"mul", 16}}), wait}}};
    if (tiled) loop["index"] = "i";
    if (nd) {  // plgpu.nd_loop((2 * steps,), collective_axes="x"): steps trips on each CTA
      loop.erase("trip_count");
      loop["op"] = "nd_loop";
      loop["grid"] = {2 * steps};
      loop["collective_axes"] = "x";
      if (tiled) loop["index"] = {"i"};
    }
    body.push_back(loop);
  } else {
    for (std::int64_t i = 0; i < steps; ++i) {
      body.push_back(copy(16 * i));
      body.push_back(wait);
    }
  }
  const nlohmann::json j = {
      {"format", 1},
      {"name", "bench_loop"},
      {"mesh", {{"cluster", {2}}, {"cluster_names", {"x"}}}},
      {"target", {{"arch", "sm_90a"}, {"semantics", "lane"}}},
      {"inputs",
       {{{"name", "x"},
         {"shape", {tiled ? 16 * steps * (nd ? 2 : 1) : 16, 64}},
         {"dtype", "float32"}}}},
      {"program",
       {{{"op", "run_scoped"},
         {"allocs",
          {{{"name", "dst"}, {"kind", "smem"}, {"shape", {16, 64}}, {"dtype", "float32"}},
           {{"name", "bar"}, {"kind", "barrier"}}}},
         {"body", body}}}}};
  return case_from_json(j);
}

}  // namespace collfuzz::bench
