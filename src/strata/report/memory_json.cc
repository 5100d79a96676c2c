#include "strata/report/memory_json.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "strata/job/job_json.h"

namespace strata {
Json LedgerToJson(const Job& job, const MemoryLedger& ledger, const std::vector<MemoryFix>& fixes) {
  Json doc = JsonDocument("memory");
  doc["job"] = JobToJson(job);
  doc["rank"] = ledger.rank;
  doc["pipeline_stage"] = ledger.stage;
  doc["params_per_gpu"] = ledger.params_per_gpu;
  doc["trainable_params_per_gpu"] = ledger.trainable_params_per_gpu;
  doc["capacity_bytes"] = JsonBytes(ledger.capacity);
  Json items = Json::array();
  for (const auto& item : ledger.items) {
    items.push_back({{"kind", ItemKindName(item.kind)},
                     {"name", item.name},
                     {"bytes", JsonBytes(item.bytes)},
                     {"size_gb", JsonNumber(item.bytes.gb())},
                     {"formula", item.formula},
                     {"note", item.note}});
  }
  doc["items"] = std::move(items);
  Json host = Json::array();
  for (const auto& item : ledger.host_items) {
    host.push_back({{"name", item.name}, {"bytes", JsonBytes(item.bytes)}, {"note", item.note}});
  }
  doc["host_items"] = std::move(host);
  Json phases = Json::array();
  for (const auto& p : ledger.phases) {
    phases.push_back({{"phase", PhaseName(p.phase)},
                      {"bytes", JsonBytes(p.bytes)},
                      {"size_gb", JsonNumber(p.bytes.gb())},
                      {"max_memory_allocated_bytes", JsonBytes(p.counters.allocated)},
                      {"max_memory_reserved_bytes", JsonBytes(p.counters.reserved)},
                      {"device_used_bytes", JsonBytes(p.counters.device_used)},
                      {"formula", p.formula}});
  }
  doc["phases"] = std::move(phases);
  doc["peak_before_step1_bytes"] = JsonBytes(ledger.peak_before_step1);
  doc["peak_after_step1_bytes"] = JsonBytes(ledger.peak_after_step1);
  doc["headroom_bytes"] = JsonBytes(ledger.headroom());
  doc["verdict"] = MemoryVerdictName(ledger.verdict);
  doc["fits_as_predicted"] = ledger.fits;
  const AllocatorCounters& c = ledger.peak_counters;
  doc["counters_at_peak"] = {{"max_memory_allocated_bytes", JsonBytes(c.allocated)},
                             {"max_memory_reserved_bytes", JsonBytes(c.reserved)},
                             {"device_used_bytes", JsonBytes(c.device_used)},
                             {"fragmentation_bytes", JsonBytes(c.fragmentation)},
                             {"side_stream_cache_bytes", JsonBytes(c.side_stream)},
                             {"outside_allocator_bytes", JsonBytes(c.outside)},
                             {"formulas",
                              {{"max_memory_allocated", ledger.allocated_formula},
                               {"max_memory_reserved", ledger.reserved_formula},
                               {"device_used", ledger.device_used_formula}}}};
  doc["error_band"] = {{"counter", "device_used"},
                       {"family", ledger.band_family},
                       {"job_family", ledger.job_family},
                       {"rows", ledger.band_rows},
                       {"measured_peak_low_bytes", JsonBytes(ledger.band_low)},
                       {"measured_peak_high_bytes", JsonBytes(ledger.band_high)},
                       {"source", "docs/memory-validation.md"}};
  doc["oom_phase"] = ledger.fits ? Json() : Json(PhaseName(ledger.oom_phase));
  doc["only_after_step1_exceeds"] = ledger.only_after_step1_exceeds;
  Json fix_list = Json::array();
  for (const auto& f : fixes) {
    fix_list.push_back({{"change", f.change},
                        {"set", f.overrides},
                        {"command", job.CommandLine("memory", f.overrides)},
                        {"cost", f.cost},
                        {"peak_bytes", JsonBytes(f.peak)},
                        {"fits", f.fits}});
  }
  doc["fixes"] = std::move(fix_list);
  return doc;
}

}  // namespace strata
