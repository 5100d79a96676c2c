// Collects job fields with their provenance and writes the job YAML in the order of a job file,
// each value commented with where it came from.
#ifndef STRATA_IMPORTER_JOB_BUILDER_H_
#define STRATA_IMPORTER_JOB_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/importer/import_job.h"

namespace strata {

/// `header` as comment lines, then `fields` in `order` as a sectioned YAML file ("batch:", then
/// "  micro_batch: 1   # its source"); a field `order` lacks is listed as a comment, "# not
/// <what>, left out: key = value (source)", so that nothing set is dropped without a word.
std::string SourcedYaml(const std::vector<ImportedField>& fields,
                        const std::vector<std::string>& order, const std::string& header,
                        const std::string& what);

class JobBuilder {
 public:
  /// `origin`: who made the value (FieldOrigin); a value read from the input by default.
  void Set(const std::string& key, std::string value, std::string source,
           FieldOrigin origin = FieldOrigin::kFromInput);
  /// A framework default: recorded as the field's source and in the report's defaults. It stands
  /// for what the input leaves unsaid, so it never replaces a value the input set (Set with
  /// kFromInput); it does replace an earlier default or derived value.
  void Default(const std::string& key, std::string value, const std::string& why);
  /// A value the importer derived from others (`how`): its source reads "derived: <how>".
  void Derive(const std::string& key, std::string value, const std::string& how);
  bool Has(const std::string& key) const;
  std::string Get(const std::string& key) const;  // "" when unset
  /// The field as a positive whole number; otherwise (unset, a word, an unresolved shell
  /// variable, out of range) an error naming the field, its value and where it came from.
  Result<int64_t> GetPositiveInt(const std::string& key) const;

  /// batch.global_batch = micro x `per_micro`, where `per_micro` is what the framework multiplies
  /// the micro batch by (`how`: "accumulation 4 (source) x DP 64"). Kept so that a micro batch
  /// given later (`strata import --set batch.micro_batch=N`) derives the global batch again: the
  /// frameworks derive it from the micro batch the job runs, not the one the input had.
  void DeriveGlobalBatch(int64_t micro, int64_t per_micro, std::string how);
  /// After `--set batch.micro_batch=N` without `--set batch.global_batch`: the global batch of a
  /// job that derives it (DeriveGlobalBatch), again from N. Does nothing otherwise.
  Status RederiveGlobalBatch(const std::string& micro_source);

  /// A framework default that matters but is not a job field (a timeout, a dataset behaviour).
  void NamedDefault(std::string text) { defaults_.push_back(std::move(text)); }
  void Note(std::string note) { notes_.push_back(std::move(note)); }
  void Unused(std::string line) { unused_.push_back(std::move(line)); }

  /// The YAML text: `header` as comment lines, then the fields grouped as in a job file.
  std::string Yaml(const std::string& header) const;
  /// Moves the collected fields, defaults, notes and unused lines into `report`.
  void Fill(ImportReport& report) const;

 private:
  std::vector<ImportedField> fields_;
  std::vector<std::string> defaults_;
  std::vector<std::string> notes_;
  std::vector<std::string> unused_;
  int64_t global_per_micro_ = 0;  // 0: the global batch is not derived from the micro batch
  std::string global_how_;
};

}  // namespace strata

#endif  // STRATA_IMPORTER_JOB_BUILDER_H_
