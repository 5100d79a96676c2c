#include "strata/importer/job_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "strata/core/text_scan.h"
#include "strata/job/job_fields.h"

namespace strata {

void JobBuilder::Set(const std::string& key, std::string value, std::string source,
                     FieldOrigin origin) {
  for (auto& f : fields_) {
    if (f.key == key) {
      f.value = std::move(value);
      f.source = std::move(source);
      f.origin = origin;
      return;
    }
  }
  fields_.push_back({key, std::move(value), std::move(source), origin});
}

void JobBuilder::Default(const std::string& key, std::string value, const std::string& why) {
  const auto held = std::find_if(fields_.begin(), fields_.end(),
                                 [&](const ImportedField& f) { return f.key == key; });
  if (held != fields_.end()) {
    // What the input says, or what the importer derived from it, stands; a later default
    // replaces an earlier one, in the report too.
    if (held->origin != FieldOrigin::kDefault) return;
    const std::string prefix = key + " = ";
    std::erase_if(defaults_, [&](const std::string& d) { return d.starts_with(prefix); });
  }
  defaults_.push_back(fmt::format("{} = {}: {}", key, value, why));
  Set(key, std::move(value), "default: " + why, FieldOrigin::kDefault);
}

void JobBuilder::Derive(const std::string& key, std::string value, const std::string& how) {
  Set(key, std::move(value), "derived: " + how, FieldOrigin::kDerived);
}

bool JobBuilder::Has(const std::string& key) const {
  return std::any_of(fields_.begin(), fields_.end(),
                     [&](const ImportedField& f) { return f.key == key; });
}

std::string JobBuilder::Get(const std::string& key) const {
  for (const auto& f : fields_) {
    if (f.key == key) return f.value;
  }
  return "";
}

Result<int64_t> JobBuilder::GetPositiveInt(const std::string& key) const {
  for (const auto& f : fields_) {
    if (f.key != key) continue;
    if (const std::optional<int64_t> v = ParseInt64(f.value); v && *v > 0) return *v;
    return InvalidInput(fmt::format("{} is '{}' (from {}): expected a positive whole number", key,
                                    f.value, f.source))
        .InField(key)
        .WithHint("pass the value to strata import (--set, --nodes, --gpus-per-node)");
  }
  return InvalidInput(fmt::format("{} is not known from the launch input", key)).InField(key);
}

void JobBuilder::DeriveGlobalBatch(int64_t micro, int64_t per_micro, std::string how) {
  global_per_micro_ = per_micro;
  global_how_ = std::move(how);
  Derive("batch.global_batch", std::to_string(micro * per_micro),
         fmt::format("micro {} x {}", micro, global_how_));
}

Status JobBuilder::RederiveGlobalBatch(const std::string& micro_source) {
  if (global_per_micro_ <= 0) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(const int64_t micro, GetPositiveInt("batch.micro_batch"));
  Derive("batch.global_batch", std::to_string(micro * global_per_micro_),
         fmt::format("micro {} ({}) x {}", micro, micro_source, global_how_));
  return OkStatus();
}

std::string SourcedYaml(const std::vector<ImportedField>& fields,
                        const std::vector<std::string>& order, const std::string& header,
                        const std::string& what) {
  std::string out;
  size_t pos = 0;
  while (pos < header.size()) {
    const size_t nl = header.find('\n', pos);
    out += "# " + header.substr(pos, nl - pos) + "\n";
    pos = nl == std::string::npos ? header.size() : nl + 1;
  }
  std::string section;
  for (const std::string& key : order) {
    const auto it = std::find_if(fields.begin(), fields.end(),
                                 [&](const ImportedField& f) { return f.key == key; });
    if (it == fields.end()) continue;
    const size_t dot = key.find('.');
    std::string line;
    if (dot == std::string::npos) {
      section.clear();
      line = fmt::format("{}: {}", key, it->value);
    } else {
      const std::string sec = key.substr(0, dot);
      if (sec != section) {
        out += sec + ":\n";
        section = sec;
      }
      line = fmt::format("  {}: {}", key.substr(dot + 1), it->value);
    }
    out += fmt::format("{:<34} # {}\n", line, it->source);
  }
  for (const ImportedField& f : fields) {
    if (std::find(order.begin(), order.end(), f.key) == order.end()) {
      out += fmt::format("# not {}, left out: {} = {} ({})\n", what, f.key, f.value, f.source);
    }
  }
  return out;
}

std::string JobBuilder::Yaml(const std::string& header) const {
  // The order of the job-field table (docs/job-file.md), so that no field the importer set is
  // left out of the file: a field missing here would silently fall back to strata's default.
  std::vector<std::string> order;
  for (const JobField& f : JobFields()) order.emplace_back(f.key);
  // `--set cluster=NAME` beside the launch's own GPU and counts wrote `cluster:` twice (the name,
  // then the section), and YAML readers kept the name alone. Written as the section's `file`,
  // the job keeps the file's network with the launch's GPU and counts, as `cluster.file` means.
  std::vector<ImportedField> fields = fields_;
  const auto named = std::find_if(fields.begin(), fields.end(),
                                  [](const ImportedField& f) { return f.key == "cluster"; });
  const bool named_with_fields =
      named != fields.end() && std::any_of(fields.begin(), fields.end(), [](const auto& f) {
        return f.key.starts_with("cluster.");
      });
  if (named_with_fields) {
    ImportedField file = *named;
    fields.erase(named);
    file.key = "cluster.file";
    if (!Has("cluster.file")) fields.push_back(std::move(file));
  }
  return SourcedYaml(fields, order, header, "a job field");
}

void JobBuilder::Fill(ImportReport& report) const {
  report.fields = fields_;
  report.defaults = defaults_;
  report.notes = notes_;
  report.unused = unused_;
}

}  // namespace strata
