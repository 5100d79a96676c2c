// What an importer reads: a flat view of one framework's configuration, each value with where it
// came from (a flag on line 12, a key of a JSON file, a line of Megatron's argument dump), and
// which values a mapper consumed, so that the rest can be listed instead of silently dropped.
#ifndef STRATA_IMPORTER_SETTINGS_H_
#define STRATA_IMPORTER_SETTINGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

/// What kind of setting of a launch leaves a key of it unread (Settings::NoStepCost): its switch
/// is off, or the code the launch runs never reads it. The import summary names the kinds that
/// applied, in this order.
enum class UnreadBecause {
  kDynamicBatchingOff,  // a token budget whose dynamic batching is off
  kNoReferencePass,     // a key of a reference pass that does not run
  kNoCriticPass,        // a key of a critic that does not run
  kStrategyDoesNotRead  // a key the actor's training strategy never reads (FSDP2's under FSDP1)
};

struct SourcedValue {
  std::string value;   // as written ("true" for a bare flag)
  std::string source;  // "--tensor-model-parallel-size (line 12)"
};

class Settings {
 public:
  /// `key` is normalised: leading dashes dropped, '-' -> '_'. A later value replaces an earlier
  /// one, as argparse and Hydra do.
  void Set(const std::string& key, std::string value, std::string source);

  bool Has(const std::string& key) const;
  /// The value, marking the key as used; nullptr when absent.
  const SourcedValue* Use(const std::string& key);
  /// The value without marking the key used (a mapper that maps some values of a key and leaves
  /// others listed); nullptr when absent.
  const SourcedValue* Peek(const std::string& key) const;
  /// Marks keys as read without using their value (known to be irrelevant for a job).
  void Ignore(const std::string& key);
  /// Says why a key the input gives has no effect on a step's time or memory in this launch (a
  /// token budget whose dynamic batching the launch leaves off, a key of a pass it never runs:
  /// the framework never reads it).
  /// The key stays unused, so it is still listed, but counted apart from the keys that may
  /// change a step, with `why` as its reason. A key the input does not give is left alone.
  void NoStepCost(const std::string& key, std::string why, UnreadBecause kind);
  /// Takes back NoStepCost for `key`: the framework reads it after all (as the default of
  /// another setting), so it is listed again among the keys that may change a step.
  void ReadAfterAll(const std::string& key);
  /// The reason NoStepCost gave `key`, or nullptr.
  const std::string* NoStepCostOf(const std::string& key) const;
  /// The kind of setting that leaves `key` unread (NoStepCost), or nullopt.
  std::optional<UnreadBecause> NoStepCostKindOf(const std::string& key) const;
  /// Says why a key the input gives, whose meaning the importer knows, is not modelled although
  /// it may change a step (a compile of one function, a vLLM scheduler budget): the key stays
  /// listed among those that may change a step, and --explain gives `why`. A key the input does
  /// not give is left alone.
  void NotModelled(const std::string& key, std::string why);
  /// The reason NotModelled gave `key`, or nullptr.
  const std::string* NotModelledWhy(const std::string& key) const;

  /// Typed reads; an unparsable value is an error naming the key and its source.
  Result<std::optional<int64_t>> Int(const std::string& key);
  Result<std::optional<bool>> Bool(const std::string& key);
  /// A number as Python's float() and Hydra read one: 1e-3, .5, 5., 0.001, 1_000, +2, -0.5;
  /// inf and nan are refused (no setting the importer reads takes them).
  Result<std::optional<double>> Number(const std::string& key);
  /// Numbers separated by spaces (an argparse nargs='+' value such as "1e-2 1e-3"), at least one;
  /// empty when the key is absent.
  Result<std::vector<double>> Numbers(const std::string& key);
  std::optional<std::string> String(const std::string& key);

  /// A key of the input no mapper used that is a near miss of a key a mapper asked for and the
  /// input does not have (tensor_model_paralel_size for tensor_model_parallel_size): the
  /// framework would refuse it as unknown, so it is a typo, not a setting strata chose to skip.
  /// A near miss is one slip apart (a character dropped, added or changed, two swapped); keys
  /// of fewer than 6 characters are never taken for typos (tf32 beside bf16 and fp16 are real).
  struct NearMiss {
    std::string key;    // as read
    std::string known;  // the mapped key it is close to
    std::string source;
  };
  std::optional<NearMiss> FirstNearMiss() const;

  /// The keys no mapper used, in key order, with their values and sources.
  std::vector<std::pair<std::string, SourcedValue>> Unused() const;
  size_t size() const { return values_.size(); }

 private:
  std::map<std::string, SourcedValue> values_;
  std::set<std::string> used_;
  struct Unread {
    std::string why;
    UnreadBecause kind;
  };
  std::map<std::string, Unread> no_step_cost_;       // key -> why (NoStepCost)
  std::map<std::string, std::string> not_modelled_;  // key -> why (NotModelled)
  // Every key a mapper asked for (Has, Use), present or not: the keys the importer knows.
  mutable std::set<std::string> asked_;
};

/// "--tensor-model-parallel-size" -> "tensor_model_parallel_size".
std::string NormaliseKey(std::string key);

/// The number Settings::Number reads (Python's float() literal, finite), for values read outside
/// Settings; nullopt for anything else.
std::optional<double> ParsePythonNumber(std::string_view text);

}  // namespace strata

#endif  // STRATA_IMPORTER_SETTINGS_H_
