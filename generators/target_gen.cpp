#include "generators/target_gen.h"

#include "generators/weighted.h"

namespace collfuzz::generators {

rc::Gen<Target> target() {
  return rc::gen::build<Target>(
      rc::gen::set(
          &Target::arch,
          weighted_element<Arch>({{70, Arch::kSm90a}, {18, Arch::kSm100a}, {12, Arch::kSm80}})),
      rc::gen::set(&Target::semantics, weighted_element<Semantics>(
                                           {{55, Semantics::kWarpgroup}, {45, Semantics::kLane}})),
      rc::gen::set(&Target::entry,
                   weighted_element<Entry>({{96, Entry::kKernel}, {4, Entry::kPallasCall}})),
      rc::gen::set(&Target::profile,
                   weighted_element<Profile>({{65, Profile::kMosaic}, {35, Profile::kInterpret}})));
}

}  // namespace collfuzz::generators
