#include "strata/report/step_json.h"

#include <nlohmann/json.hpp>

#include "strata/job/job_json.h"

namespace strata {
namespace {

Json KernelsJson(const KernelTimes& k) {
  return {{"dense_gemm_s", k.dense_gemm.s()},
          {"expert_gemm_s", k.expert_gemm.s()},
          {"attention_s", k.attention.s()},
          {"gated_deltanet_s", k.gated_deltanet.s()},
          {"memory_bound_s", k.memory_bound.s()},
          {"logits_and_loss_s", k.logits_and_loss.s()},
          {"vision_s", k.vision.s()},
          {"total_s", k.total().s()}};
}

}  // namespace

Json StepToJson(const StepSetup& setup, const StepResult& r) {
  const StepLayout& sl = setup.layout;
  Json doc = JsonDocument("step");
  doc["job"] = JobToJson(setup.job);
  doc["job"]["micro_batches_per_step"] = sl.micro_batches;
  doc["overlap"] = {
      {"tp_comm", sl.overlap.tp_comm},         {"moe_a2a", sl.overlap.moe_a2a},
      {"cp_comm", sl.overlap.cp_comm},         {"pp_p2p", PpP2pOverlapped(sl)},
      {"grad_reduce", sl.overlap.grad_reduce}, {"param_gather", sl.overlap.param_gather}};
  doc["sequence"] = {{"mean_tokens", setup.tables.mean_tokens},
                     {"attention_tokens", setup.tables.attention_tokens},
                     {"max_tokens", setup.tables.lengths.max_tokens},
                     {"length_distribution_assumed", setup.tables.lengths.assumed}};
  const FrameworkProfile& fw = setup.tables.framework;
  doc["framework"] = {{"name", fw.name},
                      {"version", fw.version},
                      {"given", setup.job.spec.framework.given},
                      {"version_given", !setup.job.spec.framework.version.empty()},
                      {"compile", setup.job.spec.framework.compile},
                      {"engine", fw.engine},
                      {"implementation_assumptions", fw.assumptions},
                      {"per_micro_batch",
                       {{"host_bound_layers_s", r.framework.host_bound_layers.s()},
                        {"fetch_hooks_s", r.framework.fetch_hooks.s()},
                        {"expert_loop_s", r.framework.expert_loop.s()},
                        {"attention_backend_s", r.framework.attention_backend.s()},
                        {"eager_elementwise_s", r.framework.eager_elementwise.s()},
                        {"fsdp2_copy_out_s", r.framework.fsdp2_copy_out.s()}}}};
  doc["step_time_s"] = r.step.s();
  doc["micro_batch_time_s"] = r.micro_batch.s();
  doc["tokens_per_step"] = r.tokens_per_step;
  doc["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  doc["mfu"] = r.mfu;
  doc["model_flop_per_token"] = r.model_flop_per_token;
  doc["mfu_of"] = "bf16 dense peak";
  if (setup.layout.fp8.on()) doc["mfu_of_fp8_peak"] = r.mfu_fp8;
  if (!r.mfu_flag.empty()) doc["mfu_flag"] = r.mfu_flag;
  doc["hfu"] = r.hfu;
  doc["bubble_fraction"] = r.bubble_fraction;
  Json parts = Json::array();
  for (size_t i = 0; i < kStepPartCount; ++i) {
    const StepPartTime& p = r.parts[i];
    if (p.total.s() <= 0) continue;
    parts.push_back({{"name", StepPartName(static_cast<StepPart>(i))},
                     {"total_s", p.total.s()},
                     {"exposed_s", p.exposed.s()},
                     {"hidden_s", (p.total - p.exposed).value()},
                     {"share_of_step", p.exposed / r.step}});
  }
  doc["breakdown"] = parts;
  doc["micro_batch"] = {{"forward", KernelsJson(r.forward)},
                        {"backward", KernelsJson(r.backward)},
                        {"recompute", KernelsJson(r.recompute)}};
  Json traffic = Json::array();
  for (const PricedTraffic& p : r.traffic) {
    traffic.push_back({{"group", ToString(p.item.group)},
                       {"purpose", p.item.purpose},
                       {"op", ToString(p.item.op)},
                       {"size_bytes", JsonBytes(p.item.size)},
                       {"calls_per_step", p.item.calls_per_step},
                       {"time_per_call_s", p.cost.time.s()},
                       {"time_per_step_s", p.time_per_step.s()},
                       {"level", p.cost.level}});
  }
  doc["traffic"] = traffic;
  Json host = Json::array();
  for (const HostTraffic& h : r.host_traffic) {
    host.push_back({{"purpose", h.purpose},
                    {"level", h.level},
                    {"size_per_step_bytes", JsonBytes(h.size_per_step)},
                    {"time_per_step_s", h.time_per_step.s()}});
  }
  doc["host_traffic"] = host;
  doc["caveats"] = r.caveats;
  return doc;
}

Json StepToJson(const Evaluation& e) {
  Json j = StepToJson(*e.setup, *e.step);
  if (e.step_band) {
    const StepErrorBand& b = *e.step_band;
    j["error_band"] = {{"family", b.family},
                       {"fit_rows", b.rows},
                       {"low_ratio", b.low},
                       {"high_ratio", b.high},
                       {"low_row", b.low_row},
                       {"high_row", b.high_row},
                       {"low_step_s", b.low * e.step->step.s()},
                       {"high_step_s", b.high * e.step->step.s()}};
  }
  Json runs = Json::array();
  for (const ModelStepRuns& m : e.model_runs) {
    runs.push_back({{"model", m.model},
                    {"gpu", m.gpu},
                    {"rows", m.rows},
                    {"low_ratio", m.low},
                    {"high_ratio", m.high},
                    {"low_row", m.low_row},
                    {"high_row", m.high_row},
                    {"low_step_s", m.low * e.step->step.s()},
                    {"high_step_s", m.high * e.step->step.s()}});
  }
  j["model_runs"] = runs;
  Json effects = Json::array();
  for (const AssumptionEffect& a : e.assumption_effects) {
    effects.push_back({{"assumption", a.assumption},
                       {"alternative", a.alternative},
                       {"set", a.set},
                       {"step_s", a.step.s()},
                       {"delta_s", a.delta.s()}});
  }
  j["assumption_effects"] = effects;
  return j;
}

}  // namespace strata
