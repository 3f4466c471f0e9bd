// The memory allocator this process runs on. A campaign allocates in small pieces on every case
// (RapidCheck's shrink trees, the reference's and the simulator's state); collfuzz's executables
// link mimalloc where it is installed (cmake/allocator.cmake), which makes a campaign about 40%
// faster than on glibc's malloc. Reports and benchmarks name the allocator so that figures from
// two machines can be compared.
#pragma once

#include <string>

namespace collfuzz {

// "mimalloc 2.0.9" when mimalloc serves this process's malloc, else "system malloc".
std::string allocator_name();

// Whether mimalloc serves malloc (it is linked and overrides the C library's allocator).
bool mimalloc_in_use();

}  // namespace collfuzz
