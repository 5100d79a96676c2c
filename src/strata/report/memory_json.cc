#include "strata/report/memory_json.h"

#include <cmath>
#include <cstdint>

namespace strata {
namespace {

int64_t WholeBytes(Bytes b) { return static_cast<int64_t>(std::llround(b.count())); }

}  // namespace

Json LedgerToJson(const Job& job, const MemoryLedger& ledger, const std::vector<MemoryFix>& fixes) {
  const JobSpec& s = job.spec;
  const ParallelLayout& l = s.layout;
  Json doc = JsonDocument("memory");
  doc["job"] = {{"file", s.file},
                {"cluster", job.cluster.name},
                {"model", job.model.name},
                {"gpu", job.gpu.name},
                {"gpus", s.cluster.world()},
                {"tp", l.tp},
                {"pp", l.pp},
                {"vpp", l.vpp},
                {"cp", l.cp},
                {"ep", l.ep},
                {"etp", l.etp},
                {"dp", l.dp},
                {"expert_dp", l.expert_dp()},
                {"sequence_parallel", l.sequence_parallel},
                {"micro_batch", s.micro_batch},
                {"global_batch", s.global_batch},
                {"max_tokens", static_cast<int64_t>(s.sequence.max_tokens)},
                {"recompute", RecomputeGranularityName(s.recompute.granularity)},
                {"param_dtype", DTypeName(s.param_dtype)},
                {"grad_dtype", DTypeName(s.grad_dtype)},
                {"distributed_optimizer", s.optimizer.distributed},
                {"cross_entropy", CrossEntropyImplName(s.cross_entropy)}};
  doc["job"]["sharding"] = ShardingModeName(s.sharding.mode);
  doc["job"]["fp8_recipe"] = Fp8RecipeName(s.fp8.recipe);
  // Only when set, so the JSON of jobs without them is unchanged.
  if (s.recompute.titan.on()) {
    doc["job"]["selective_ac_option"] =
        s.recompute.titan.op ? std::string("op") : std::to_string(s.recompute.titan.every_n_layers);
  }
  if (s.activation_offload.on()) {
    doc["job"]["activation_offload_layers"] = s.activation_offload.num_layers;
  }
  doc["rank"] = ledger.rank;
  doc["pipeline_stage"] = ledger.stage;
  doc["params_per_gpu"] = ledger.params_per_gpu;
  doc["trainable_params_per_gpu"] = ledger.trainable_params_per_gpu;
  doc["capacity_bytes"] = WholeBytes(ledger.capacity);
  Json items = Json::array();
  for (const auto& item : ledger.items) {
    items.push_back({{"kind", ItemKindName(item.kind)},
                     {"name", item.name},
                     {"bytes", WholeBytes(item.bytes)},
                     {"size_gb", JsonNumber(item.bytes.gb())},
                     {"formula", item.formula},
                     {"note", item.note}});
  }
  doc["items"] = std::move(items);
  Json host = Json::array();
  for (const auto& item : ledger.host_items) {
    host.push_back({{"name", item.name}, {"bytes", WholeBytes(item.bytes)}, {"note", item.note}});
  }
  doc["host_items"] = std::move(host);
  Json phases = Json::array();
  for (const auto& p : ledger.phases) {
    phases.push_back({{"phase", PhaseName(p.phase)},
                      {"bytes", WholeBytes(p.bytes)},
                      {"size_gb", JsonNumber(p.bytes.gb())},
                      {"formula", p.formula}});
  }
  doc["phases"] = std::move(phases);
  doc["peak_before_step1_bytes"] = WholeBytes(ledger.peak_before_step1);
  doc["peak_after_step1_bytes"] = WholeBytes(ledger.peak_after_step1);
  doc["headroom_bytes"] = WholeBytes(ledger.headroom());
  doc["verdict"] = MemoryVerdictName(ledger.verdict);
  doc["fits_as_predicted"] = ledger.fits;
  doc["error_band"] = {{"measured_peak_low_bytes", WholeBytes(ledger.band_low)},
                       {"measured_peak_high_bytes", WholeBytes(ledger.band_high)},
                       {"source", "docs/memory-validation.md"}};
  doc["oom_phase"] = ledger.fits ? Json() : Json(PhaseName(ledger.oom_phase));
  doc["only_after_step1_exceeds"] = ledger.only_after_step1_exceeds;
  Json fix_list = Json::array();
  for (const auto& f : fixes) {
    fix_list.push_back({{"change", f.change},
                        {"set", f.overrides},
                        {"command", job.CommandLine("memory", f.overrides)},
                        {"cost", f.cost},
                        {"peak_bytes", WholeBytes(f.peak)},
                        {"fits", f.fits}});
  }
  doc["fixes"] = std::move(fix_list);
  return doc;
}

}  // namespace strata
