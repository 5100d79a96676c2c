// The step corpora's rows as the error band reads them: each validation test writes its rows
// (tests/sim/validation/band_rows/<corpus>.tsv, a golden it checks) and the band test reads the
// three files, so the band is derived from exactly the rows the documents report.
#ifndef STRATA_TESTS_SIM_STEP_BAND_ROWS_H_
#define STRATA_TESTS_SIM_STEP_BAND_ROWS_H_

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "strata/sim/step_error_band.h"
#include "support/golden.h"

namespace strata::testing {

inline constexpr const char* kBandRowsHeader =
    "id\tsplit\tfamily\tpredicted_s\tmeasured_s\tmodel\tgpu\tlayout\n";

/// One line a row, tab-separated, the steps to 6 significant digits; the model and GPU by their
/// catalog names; the layout's expert-parallel family (sim/step_layout_error.h), "" without EP.
inline std::string BandRowsTsv(const std::vector<StepBandRow>& rows) {
  std::string out = kBandRowsHeader;
  for (const StepBandRow& r : rows) {
    out += fmt::format("{}\t{}\t{}\t{:.6g}\t{:.6g}\t{}\t{}\t{}\n", r.id, r.split, r.family,
                       r.predicted_s, r.measured_s, r.model, r.gpu, r.layout);
  }
  return out;
}

/// The rows of tests/<relative>, as BandRowsTsv wrote them; fails the test on a malformed line.
inline std::vector<StepBandRow> ReadBandRows(const std::string& relative) {
  std::vector<StepBandRow> rows;
  std::istringstream in(ReadTestFile(relative));
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    // Eight tab-separated fields; the model and GPU may be empty (a row kept out of the
    // records of each model's runs), the layout family too (no EP).
    std::vector<std::string> f;
    size_t from = 0;
    for (size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', from)) {
      f.push_back(line.substr(from, tab - from));
      from = tab + 1;
    }
    f.push_back(line.substr(from));
    if (f.size() != 8) {
      ADD_FAILURE() << relative << ": malformed line '" << line << "'";
      continue;
    }
    StepBandRow r{f[0], f[1], f[2], 0, 0, f[5], f[6], f[7]};
    const std::string& predicted = f[3];
    const std::string& measured = f[4];
    r.predicted_s = std::stod(predicted);
    r.measured_s = std::stod(measured);
    rows.push_back(r);
  }
  return rows;
}

/// The rows of the three step corpora (step validation, framework runs, model cards), in that
/// order, as the step error band and the layout families read them.
inline std::vector<StepBandRow> ReadAllBandRows() {
  std::vector<StepBandRow> rows;
  for (const char* corpus : {"step_validation", "framework_runs", "model_cards"}) {
    const std::vector<StepBandRow> part =
        ReadBandRows(fmt::format("sim/validation/band_rows/{}.tsv", corpus));
    EXPECT_FALSE(part.empty()) << corpus;
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_SIM_STEP_BAND_ROWS_H_
