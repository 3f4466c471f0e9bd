#include "generators/case_stream.h"

#include <rapidcheck.h>

#include "generators/case_gen.h"

namespace collfuzz::generators {
namespace {

std::optional<JaxVersion>& generated_jax() {
  static std::optional<JaxVersion> v;
  return v;
}

void stamp(Case& c, std::uint64_t seed, std::uint64_t index) {
  c.name = generated_case_name(seed, index);
  if (generated_jax()) {
    c.target.jax = *generated_jax();
    c.target.jax_pinned = true;
  }
}

const rc::Gen<Case>& the_generator() {
  static const rc::Gen<Case> gen = any_case();
  return gen;
}

}  // namespace

rc::Random case_random(std::uint64_t seed, std::uint64_t index) {
  return rc::Random(rc::Random::Key{seed, index, 0x636f6c6c66757a7aULL, 1});
}

std::string generated_case_name(std::uint64_t seed, std::uint64_t index) {
  return "gen-" + std::to_string(seed) + "-" + std::to_string(index);
}

void pin_generated_jax(std::optional<JaxVersion> v) { generated_jax() = v; }

rc::Shrinkable<Case> generate_shrinkable(std::uint64_t seed, std::uint64_t index) {
  return rc::shrinkable::map(the_generator()(case_random(seed, index), kCaseSize),
                             [seed, index](Case c) {
                               stamp(c, seed, index);
                               return c;
                             });
}

Case generate_case(std::uint64_t seed, std::uint64_t index) {
  Case c = the_generator()(case_random(seed, index), kCaseSize).value();
  stamp(c, seed, index);
  return c;
}

}  // namespace collfuzz::generators
