#include "harness/core/errors.h"
#include "harness/executors/executor.h"
#include "harness/executors/gpu_presence.h"
#include "harness/executors/registry_entries.h"

namespace collfuzz {
namespace {

// An executor that cannot run on this machine, known before anything is started.
class UnavailableExecutor final : public Executor {
 public:
  UnavailableExecutor(std::string name, Profile profile, std::string reason)
      : name_(std::move(name)), profile_(profile), reason_(std::move(reason)) {}
  std::string name() const override { return name_; }
  Profile profile() const override { return profile_; }
  std::string unavailable_reason() const override { return reason_; }
  Outcome run(const Case&) override { return unavailable(name_, profile_, reason_); }

 private:
  std::string name_;
  Profile profile_;
  std::string reason_;
};

// jax-gpu needs a GPU: without one it is unavailable for every case, and no Python starts.
std::unique_ptr<Executor> make_jax_gpu_executor_if_gpu(const ExecutorOptions& options) {
  if (std::string why = no_gpu_reason(); !why.empty())
    return std::make_unique<UnavailableExecutor>("jax-gpu", Profile::kMosaic, std::move(why));
  return make_jax_gpu_executor(options);
}

}  // namespace

const std::vector<ExecutorInfo>& executor_registry() {
  static const std::vector<ExecutorInfo> kRegistry = {
#define COLLFUZZ_EXECUTOR(name, description, factory) {name, description},
#include "harness/executors/executors.def"
#undef COLLFUZZ_EXECUTOR
  };
  return kRegistry;
}

std::unique_ptr<Executor> make_executor(std::string_view name,
                                        [[maybe_unused]] const ExecutorOptions& options) {
#define COLLFUZZ_EXECUTOR(n, description, factory) \
  if (name == n) return factory(options);
#include "harness/executors/executors.def"
#undef COLLFUZZ_EXECUTOR
  std::string known = "reference";
  for (const auto& e : executor_registry()) known += ", " + std::string(e.name);
  throw InputError("--executors",
                   "unknown executor \"" + std::string(name) + "\"; known: " + known);
}

std::vector<std::string> parse_executor_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string item(list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!item.empty()) {
      bool known = item == "reference";
      for (const auto& e : executor_registry()) known = known || e.name == item;
      if (!known) make_executor(item, ExecutorOptions{});  // throws the InputError
      out.push_back(item);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw InputError("--executors", "no executor named");
  return out;
}

Outcome unavailable(const std::string& executor, Profile profile, std::string reason) {
  Outcome o;
  o.kind = OutcomeKind::kUnavailable;
  o.executor = executor;
  o.profile = profile;
  o.reason = std::move(reason);
  return o;
}

}  // namespace collfuzz
