#include "strata/calibrate/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "strata/core/file_io.h"
#include "strata/core/json_fields.h"
#include "strata/core/json_input.h"
#include "strata/hw/gpu_catalog.h"

namespace strata::calibrate {

namespace {

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The model's own GEMM rate over the groups of `kinds`: sum of FLOP / sum of time of the forward
// terms it priced (every GEMM of a group runs at its group's shape, backward at the same rate).
std::optional<double> ModelRate(const StepResult& r, std::initializer_list<GemmKind> kinds) {
  double flop = 0, time = 0;
  for (const GemmTerm& g : r.gemms) {
    if (std::find(kinds.begin(), kinds.end(), g.kind) == kinds.end()) continue;
    flop += g.flop;
    time += g.time.s();
  }
  if (!(flop > 0) || !(time > 0)) return std::nullopt;
  return flop / time;
}

Error FieldError(const std::string& file, const std::string& field, std::string message) {
  Error e = InvalidInput(std::move(message));
  e.InFile(file);
  e.field = field;
  return e;
}

Result<double> NumberAt(const nlohmann::json& o, const std::string& key, const std::string& file,
                        const std::string& path, bool positive) {
  const std::string field = path.empty() ? key : path + "." + key;
  if (!o.contains(key)) return FieldError(file, field, "missing");
  const nlohmann::json& v = o.at(key);
  if (!v.is_number()) {
    return FieldError(file, field, "expected a number, got " + DescribeJsonValue(v));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (positive && d == 0)) {
    return FieldError(file, field,
                      fmt::format("expected a {} number, got {}",
                                  positive ? "positive" : "non-negative", JsonPreview(v)));
  }
  return d;
}

Result<std::string> StringAt(const nlohmann::json& o, const std::string& key,
                             const std::string& file, const std::string& path, bool required) {
  const std::string field = path.empty() ? key : path + "." + key;
  if (!o.contains(key) || o.at(key).is_null()) {
    if (required) return FieldError(file, field, "missing");
    return std::string();
  }
  if (!o.at(key).is_string()) {
    return FieldError(file, field, "expected a string, got " + DescribeJsonValue(o.at(key)));
  }
  return o.at(key).get<std::string>();
}

}  // namespace

const CalibratedRate* Calibration::Find(std::string_view key) const {
  for (const CalibratedRate& r : rates) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

Calibration MakeCalibration(const TraceComparison& comparison, const Evaluation& e,
                            std::string created) {
  Calibration c;
  c.strata_version = STRATA_VERSION;
  c.created = std::move(created);
  for (const std::string& f : comparison.trace_files) c.traces.push_back(BaseName(f));
  c.job_file = comparison.job_file.empty() ? "" : BaseName(comparison.job_file);
  c.trace_device = comparison.trace_device;
  c.trace_gpu = comparison.trace_gpu;
  c.model = e.job.model.name;
  c.gpu = e.job.gpu().name;
  c.cluster = e.job.cluster.name;
  const ParallelLayout& l = e.job.spec.layout;
  c.tp = l.tp;
  c.pp = l.pp;
  c.cp = l.cp;
  c.ep = l.ep;
  c.dp = l.dp;
  c.measured_step_s = comparison.measured_step_s;
  c.predicted_step_s = comparison.predicted_step_s;
  c.complete = comparison.cut_files.empty();
  c.gemm_split_known = !comparison.all_gemm.has_value();
  const StepResult& r = *e.step;
  const std::optional<double> dense_rate =
      ModelRate(r, {GemmKind::kDense, GemmKind::kRouter, GemmKind::kLogits});
  const std::optional<double> expert_rate = ModelRate(r, {GemmKind::kExpert});
  for (const ComponentMapping& m : ComponentMappings()) {
    const RowComparison& row = comparison[m.row];
    const bool gemm_row = m.row == CompareRow::kDenseGemm || m.row == CompareRow::kExpertGemm;
    // Without the split, a GEMM row's measured time misses the kernels whose names do not tell:
    // its ratio is no rate, so none is written.
    const std::optional<double> ratio = gemm_row && !c.gemm_split_known ? std::nullopt : row.ratio;
    CalibratedRate rate{std::string(m.key), row.measured_s, row.predicted_s, ratio, {}, {}};
    const std::optional<double> model_rate = m.row == CompareRow::kDenseGemm    ? dense_rate
                                             : m.row == CompareRow::kExpertGemm ? expert_rate
                                                                                : std::nullopt;
    if (model_rate && row.predicted_s > 0 && Plausible(ratio)) {
      rate.model_tflop = row.predicted_s * *model_rate * 1e-12;
      if (row.measured_s > 0) rate.measured_tflops = *rate.model_tflop / row.measured_s;
    }
    c.rates.push_back(std::move(rate));
  }
  if (comparison.all_gemm) {
    const RowComparison& all = *comparison.all_gemm;
    CalibratedRate rate{
        std::string(kAllGemmKey), all.measured_s, all.predicted_s, all.ratio, {}, {}};
    if (Plausible(all.ratio) && (dense_rate || expert_rate)) {
      // Each row's predicted time at its own model rate: the model's GEMM FLOP of the step.
      const double dense_s = comparison[CompareRow::kDenseGemm].predicted_s;
      const double expert_s = comparison[CompareRow::kExpertGemm].predicted_s;
      rate.model_tflop =
          (dense_s * dense_rate.value_or(0) + expert_s * expert_rate.value_or(0)) * 1e-12;
      if (all.measured_s > 0) rate.measured_tflops = *rate.model_tflop / all.measured_s;
    }
    c.rates.push_back(std::move(rate));
  }
  return c;
}

Json CalibrationJson(const Calibration& c) {
  Json j = JsonDocument("calibration");
  j["calibration_version"] = kCalibrationVersion;
  j["provenance"] = {
      {"strata_version", c.strata_version},
      {"created", c.created},
      {"traces", c.traces},
      {"job_file", c.job_file},
      {"trace_device", c.trace_device.empty() ? Json(nullptr) : Json(c.trace_device)},
      {"trace_gpu", c.trace_gpu.empty() ? Json(nullptr) : Json(c.trace_gpu)},
      {"complete", c.complete}};
  j["job"] = {{"model", c.model}, {"gpu", c.gpu}, {"cluster", c.cluster}, {"tp", c.tp},
              {"pp", c.pp},       {"cp", c.cp},   {"ep", c.ep},           {"dp", c.dp}};
  j["measured_step_s"] = JsonNumber(c.measured_step_s);
  j["predicted_step_s"] = JsonNumber(c.predicted_step_s);
  j["gemm_split_known"] = c.gemm_split_known;
  Json rates = Json::array();
  for (const CalibratedRate& r : c.rates) {
    Json o = {{"component", r.key},
              {"measured_s", JsonNumber(r.measured_s)},
              {"predicted_s", JsonNumber(r.predicted_s)},
              {"ratio", r.ratio ? JsonNumber(*r.ratio) : Json(nullptr)}};
    if (r.model_tflop) o["model_tflop"] = JsonNumber(*r.model_tflop);
    if (r.measured_tflops) o["measured_tflops"] = JsonNumber(*r.measured_tflops);
    rates.push_back(std::move(o));
  }
  j["rates"] = std::move(rates);
  return j;
}

Result<Calibration> ParseCalibration(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(nlohmann::json j,
                          ParseUntrustedJson(text, file, kJsonMaxDepth, "a calibration file"));
  if (!j.is_object()) return FieldError(file, "", "expected a JSON object (a calibration file)");
  STRATA_ASSIGN_OR_RETURN(std::string kind, StringAt(j, "kind", file, "", true));
  if (kind != "calibration") {
    Error e = FieldError(file, "kind", "expected \"calibration\", got \"" + kind + "\"");
    e.hint = "write one with: strata profile TRACE... --job JOB --write-calibration FILE";
    return e;
  }
  if (!j.contains("calibration_version") || !j["calibration_version"].is_number_integer()) {
    return FieldError(file, "calibration_version", "missing or not an integer");
  }
  if (j["calibration_version"].get<int64_t>() != kCalibrationVersion) {
    Error e = FieldError(file, "calibration_version",
                         fmt::format("version {} is not read by this strata (it reads {})",
                                     j["calibration_version"].get<int64_t>(), kCalibrationVersion));
    return e;
  }
  Calibration c;
  for (const char* section : {"provenance", "job"}) {
    if (!j.contains(section) || !j[section].is_object()) {
      return FieldError(file, section, "missing or not an object");
    }
  }
  const nlohmann::json& p = j["provenance"];
  STRATA_ASSIGN_OR_RETURN(c.strata_version,
                          StringAt(p, "strata_version", file, "provenance", false));
  STRATA_ASSIGN_OR_RETURN(c.created, StringAt(p, "created", file, "provenance", false));
  STRATA_ASSIGN_OR_RETURN(c.job_file, StringAt(p, "job_file", file, "provenance", false));
  // Absent from files written before strata recorded them, null when the trace did not say:
  // both read as unknown, which ApplyCalibration says.
  STRATA_ASSIGN_OR_RETURN(c.trace_device, StringAt(p, "trace_device", file, "provenance", false));
  STRATA_ASSIGN_OR_RETURN(c.trace_gpu, StringAt(p, "trace_gpu", file, "provenance", false));
  if (!c.trace_gpu.empty()) {
    // A catalog name, as profile wrote it; normalised so a hand-written alias matches too.
    auto g = FindGpu(c.trace_gpu);
    if (!g.ok()) {
      return FieldError(
          file, "provenance.trace_gpu",
          "\"" + c.trace_gpu + "\" is not a GPU of data/gpus.yaml: " + g.error().message);
    }
    c.trace_gpu = g->name;
  }
  if (p.contains("complete")) {
    if (!p["complete"].is_boolean()) {
      return FieldError(file, "provenance.complete",
                        "expected true or false, got " + DescribeJsonValue(p["complete"]));
    }
    c.complete = p["complete"].get<bool>();
  }
  if (j.contains("gemm_split_known")) {
    if (!j["gemm_split_known"].is_boolean()) {
      return FieldError(file, "gemm_split_known",
                        "expected true or false, got " + DescribeJsonValue(j["gemm_split_known"]));
    }
    c.gemm_split_known = j["gemm_split_known"].get<bool>();
  }
  if (p.contains("traces")) {
    if (!p["traces"].is_array()) return FieldError(file, "provenance.traces", "expected a list");
    for (const nlohmann::json& t : p["traces"]) {
      if (!t.is_string()) return FieldError(file, "provenance.traces", "expected file names");
      c.traces.push_back(t.get<std::string>());
    }
  }
  const nlohmann::json& job = j["job"];
  STRATA_ASSIGN_OR_RETURN(c.model, StringAt(job, "model", file, "job", true));
  STRATA_ASSIGN_OR_RETURN(c.gpu, StringAt(job, "gpu", file, "job", true));
  STRATA_ASSIGN_OR_RETURN(c.cluster, StringAt(job, "cluster", file, "job", false));
  for (auto [key, field] :
       {std::pair{"tp", &c.tp}, {"pp", &c.pp}, {"cp", &c.cp}, {"ep", &c.ep}, {"dp", &c.dp}}) {
    STRATA_ASSIGN_OR_RETURN(double v, NumberAt(job, key, file, "job", true));
    *field = static_cast<int64_t>(v);
  }
  STRATA_ASSIGN_OR_RETURN(c.measured_step_s, NumberAt(j, "measured_step_s", file, "", false));
  STRATA_ASSIGN_OR_RETURN(c.predicted_step_s, NumberAt(j, "predicted_step_s", file, "", false));
  if (!j.contains("rates") || !j["rates"].is_array()) {
    return FieldError(file, "rates", "missing or not a list");
  }
  for (size_t i = 0; i < j["rates"].size(); ++i) {
    const nlohmann::json& o = j["rates"][i];
    const std::string path = fmt::format("rates[{}]", i);
    if (!o.is_object()) return FieldError(file, path, "expected an object");
    CalibratedRate r;
    STRATA_ASSIGN_OR_RETURN(r.key, StringAt(o, "component", file, path, true));
    const auto& mappings = ComponentMappings();
    if (r.key != kAllGemmKey &&
        std::none_of(mappings.begin(), mappings.end(),
                     [&](const ComponentMapping& m) { return m.key == r.key; })) {
      return FieldError(file, path + ".component", "unknown component \"" + r.key + "\"");
    }
    if (c.Find(r.key)) return FieldError(file, path + ".component", "\"" + r.key + "\" twice");
    STRATA_ASSIGN_OR_RETURN(r.measured_s, NumberAt(o, "measured_s", file, path, false));
    STRATA_ASSIGN_OR_RETURN(r.predicted_s, NumberAt(o, "predicted_s", file, path, false));
    if (o.contains("ratio") && !o["ratio"].is_null()) {
      STRATA_ASSIGN_OR_RETURN(double ratio, NumberAt(o, "ratio", file, path, true));
      r.ratio = ratio;
    }
    c.rates.push_back(std::move(r));
  }
  return c;
}

Result<Calibration> LoadCalibration(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseCalibration(text, path);
}

Status WriteCalibration(const Calibration& c, const std::string& path) {
  return WriteFileAtomic(path, DumpJson(CalibrationJson(c)));
}

std::vector<std::string> UsableRates(const Calibration& c) {
  std::vector<std::string> keys;
  auto usable = [&](std::string_view key) {
    const CalibratedRate* r = c.Find(key);
    if (r && Plausible(r->ratio)) keys.emplace_back(key);
  };
  if (c.gemm_split_known) {
    usable("dense_gemm");
    usable("expert_gemm");
  } else {
    usable(kAllGemmKey);
  }
  for (std::string_view key : {"attention", "linear_attention", "memory_bound"}) usable(key);
  return keys;
}

Result<AppliedCalibration> ApplyCalibration(const Calibration& c, const std::string& file,
                                            const ResolvedJob& job, Workspace& workspace) {
  if (c.model != job.model.name) {
    Error e = FieldError(file, "job.model",
                         fmt::format("the calibration was measured on model {}, this job's model "
                                     "is {}",
                                     c.model, job.model.name));
    e.hint = "a calibration carries over to other layouts of the same model on the same GPU";
    return e;
  }
  const GpuSpec& gpu = job.gpu();
  // The catalog entry the job's GPU is or derives from (`base:`): a variant at another power
  // limit is the same silicon, priced from the same per-GPU efficiencies.
  const std::string job_catalog_gpu = gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name;
  if (!c.trace_gpu.empty() && c.trace_gpu != job_catalog_gpu) {
    // Refused, not scaled: a ratio is a kernel's achieved fraction of the peak on the GPU it ran
    // on, and that fraction depends on the architecture (tensor-core generation, SM count,
    // cache sizes, the tiles a library tuned for it), not only on the clock and bandwidth a
    // scaling would carry. No measurement here says how an H800's fraction maps to a B200's.
    Error e = FieldError(
        file, "provenance.trace_gpu",
        fmt::format("the calibration's traces ran on {}{}, this job runs on {}: measured kernel "
                    "rates of one GPU model do not carry over to another",
                    c.trace_gpu,
                    c.trace_device.empty() ? "" : fmt::format(" (\"{}\")", c.trace_device),
                    gpu.name));
    e.hint = fmt::format(
        "profile a run on {} and write a calibration from it, or drop --calibration", gpu.name);
    return e;
  }
  if (c.gpu != gpu.name) {
    Error e = FieldError(
        file, "job.gpu",
        fmt::format("the calibration was measured on {}, this job runs on {}", c.gpu, gpu.name));
    e.hint = "kernel rates do not carry over between GPUs";
    return e;
  }
  AppliedCalibration a{file, c.traces, c.job_file, c.created, {}, {}, {}, {}, {}, {}};
  a.trace_gpu = c.trace_gpu;
  a.trace_device = c.trace_device;
  if (c.trace_gpu.empty()) {
    a.gpu_warning = fmt::format(
        "the GPU the calibration's traces ran on is unknown ({}): its rates are applied as {}'s "
        "without a check; a calibration measured on another GPU model would be wrong here",
        c.trace_device.empty()
            ? "the file does not record it: written before strata did, or from traces without "
              "deviceProperties"
            : fmt::format("\"{}\", which data/gpus.yaml does not list", c.trace_device),
        gpu.name);
  }
  // The entry the step tables read (step_tables.cc): the GPU's own, else a copy of the defaults.
  const std::string key = gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name;
  KernelEfficiencyFile& file_constants = workspace.efficiency;
  KernelEfficiency e = file_constants.For(key);
  auto ratio_of = [&](std::string_view component) -> std::optional<double> {
    const CalibratedRate* r = c.Find(component);
    if (!r || !r->ratio) return std::nullopt;
    if (!Plausible(r->ratio)) {
      a.not_carried.push_back(fmt::format(
          "{}: measured/predicted {:.3f} is outside {:.1f}x-{:.0f}x: the traced kernels and the "
          "model's terms hold different work, so it is not applied",
          component, *r->ratio, 1 / kPlausibleRatio, kPlausibleRatio));
      return std::nullopt;
    }
    return r->ratio;
  };
  // An efficiency divided by the ratio, at most 1 (a kernel cannot beat the peak the model
  // already assumes); says what it did.
  auto scale = [&](double& value, double ratio, const char* what, const char* component) {
    const double before = value;
    value = std::min(1.0, before / ratio);
    a.applied.push_back(fmt::format("{}: {:.3f} -> {:.3f} (measured/predicted {} = {:.2f}){}", what,
                                    before, value, component, ratio,
                                    before / ratio > 1 ? ", capped at 1" : ""));
  };
  const double gemm_large_before = e.gemm_large;
  // The dense and expert GEMM ratios, each its own when the traces told them apart, else the one
  // all-GEMM ratio for both (ratios the file may hold for the rows are not read then).
  std::optional<double> dense, expert;
  const char* dense_what = "dense GEMM";
  const char* expert_what = "grouped/expert GEMM";
  if (c.gemm_split_known) {
    dense = ratio_of("dense_gemm");
    expert = ratio_of("expert_gemm");
  } else {
    a.not_carried.push_back(
        "dense GEMM and grouped/expert GEMM, each its own ratio: the traces held GEMM kernels "
        "whose names do not say dense or expert (gemm_dense_or_expert), so only all GEMM time "
        "was compared; its one ratio moves both");
    dense = expert = ratio_of(kAllGemmKey);
    dense_what = expert_what = "all GEMM";
  }
  if (dense) scale(e.gemm_large, *dense, "GEMM efficiency (large shapes)", dense_what);
  if (expert) {
    // Expert GEMMs run at the GEMM efficiency x this factor, so the factor undoes the change
    // the dense scaling above applied - the applied one, gemm_large before / after, which is less
    // than the dense ratio when the efficiency was capped at 1 - and then moves by the expert
    // ratio: expert GEMMs move by their own ratio whatever the dense one did.
    // Expert GEMMs run at gemm_large x this factor of the peak on large shapes: like the GEMM
    // efficiency, that product cannot exceed 1, so the factor stops at 1 / gemm_large and the
    // rest of the measured speed-up is not carried (the model's shape factors are what is too
    // low for these shapes, not a large-shape rate above the peak).
    const double before = e.grouped_gemm_factor;
    const double dense_applied = gemm_large_before / e.gemm_large;
    const double wanted = before * dense_applied / *expert;
    const double most = 1.0 / e.gemm_large;
    e.grouped_gemm_factor = std::min(wanted, most);
    a.applied.push_back(fmt::format(
        "grouped-GEMM factor: {:.3f} -> {:.3f} (measured/predicted {} = {:.2f}; includes the "
        "routing skew measured at EP {}){}",
        before, e.grouped_gemm_factor, expert_what, *expert, c.ep,
        wanted > most ? fmt::format(", capped at {:.3f}: the expert GEMMs' large-shape "
                                    "efficiency (GEMM efficiency {:.3f} x factor) at most 1",
                                    most, e.gemm_large)
                      : ""));
    if (wanted > most) {
      a.not_carried.push_back(fmt::format(
          "{} beyond a large-shape efficiency of 1: the measured ratio {:.2f} asks for an expert "
          "GEMM efficiency of {:.3f} x {:.3f} = {:.3f} of the peak on large shapes; the model's "
          "shape factors, not that rate, are too low for the traced shapes",
          expert_what, *expert, e.gemm_large, wanted, e.gemm_large * wanted));
    }
  }
  if (const std::optional<double> att = ratio_of("attention")) {
    scale(e.attention_forward, *att, "attention forward efficiency", "attention");
    scale(e.attention_backward, *att, "attention backward efficiency", "attention");
  }
  if (const std::optional<double> lin = ratio_of("linear_attention")) {
    // Every kernel's rate moves by the measured ratio; the PyTorch fallback is host-bound (its
    // op counts and the host time are not kernel rates) and keeps its cost.
    GdnKernels& g = e.gated_deltanet;
    scale(g.fla.forward, *lin, "Gated DeltaNet fla forward rate", "linear attention");
    scale(g.fla.backward, *lin, "Gated DeltaNet fla backward rate", "linear attention");
    scale(g.flashqla.forward, *lin, "Gated DeltaNet FlashQLA forward rate", "linear attention");
    scale(g.flashqla.backward, *lin, "Gated DeltaNet FlashQLA backward rate", "linear attention");
    scale(g.other_linear_mixers, *lin, "Mamba / lightning state rate", "linear attention");
  }
  if (const std::optional<double> mem = ratio_of("memory_bound")) {
    scale(e.hbm_efficiency, *mem, "HBM efficiency", "memory-bound");
  }
  file_constants.per_gpu[key] = e;

  if (const std::optional<double> comm = ratio_of("communication")) {
    a.not_carried.push_back(fmt::format(
        "communication (measured/predicted {:.2f}): measured on {}{}; the collective model keeps "
        "pricing this job's links",
        *comm, c.cluster.empty() ? "the traced cluster" : "cluster " + c.cluster,
        c.cluster != job.cluster.name ? fmt::format(", this job's is {}", job.cluster.name) : ""));
  }
  const ParallelLayout& l = job.spec.layout;
  if (c.ep > 1 || l.ep > 1) {
    a.not_carried.push_back(fmt::format(
        "routing skew: measured at EP {} inside the expert GEMM ratio{}; the skew row keeps the "
        "job's or the default imbalance",
        c.ep, c.ep != l.ep ? fmt::format(", this job runs EP {}", l.ep) : ""));
  }
  if (const std::optional<double> idle = ratio_of("idle")) {
    a.not_carried.push_back(fmt::format(
        "GPU idle time (measured/predicted {:.2f}): bubble, stragglers and host gaps depend on "
        "the schedule and the host, not on the kernels",
        *idle));
  }
  if (!c.complete) {
    a.warnings.push_back(
        "the calibration was measured on a cut trace (provenance.complete is false): its steps "
        "may miss GPU events that lay past the cut, so its measured times are lower bounds");
  }
  if (a.applied.empty()) {
    a.warnings.push_back(
        "nothing in the calibration applies (no carried component has a ratio within "
        "0.1x-10x): the prediction is the uncalibrated model's");
  }
  if (c.tp != l.tp || c.pp != l.pp || c.cp != l.cp || c.ep != l.ep) {
    a.not_carried.push_back(fmt::format(
        "measured at TP {} PP {} CP {} EP {}, this job runs TP {} PP {} CP {} EP {}: the kernel "
        "rates carry over through the GEMM and attention shape rules",
        c.tp, c.pp, c.cp, c.ep, l.tp, l.pp, l.cp, l.ep));
  }
  return a;
}

}  // namespace strata::calibrate
