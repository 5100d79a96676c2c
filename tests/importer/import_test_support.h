// Helpers the importer tests share: the golden inputs' paths and where an imported field came from.
#ifndef STRATA_TESTS_IMPORTER_IMPORT_TEST_SUPPORT_H_
#define STRATA_TESTS_IMPORTER_IMPORT_TEST_SUPPORT_H_

#include <string>

#include "strata/importer/import_job.h"
#include "support/golden.h"
#include "support/golden_edit.h"

namespace strata::testing {

/// A file under tests/golden/cli_import (inputs and sources in its SOURCES.md).
inline std::string ImportGolden(const std::string& file) {
  return TestPath("golden/cli_import/" + file);
}

/// An input under tests/golden/cli_import named "<case>/<file>", however its case is stored: for a
/// case in the edit form (support/golden_edit.h), the edited input or a file copied beside it.
inline CaseInput ImportInput(const std::string& case_file) {
  const size_t slash = case_file.find('/');
  return CaseInput(ImportGolden(case_file.substr(0, slash)), case_file.substr(slash + 1));
}

/// The provenance the import wrote for `key`, "(not set)" when the job has no such field.
inline std::string SourceOf(const ImportReport& r, const std::string& key) {
  for (const auto& f : r.fields) {
    if (f.key == key) return f.source;
  }
  return "(not set)";
}

/// The value the import wrote for `key`, "(not set)" when the job has no such field.
inline std::string Field(const ImportReport& r, const std::string& key) {
  for (const auto& f : r.fields) {
    if (f.key == key) return f.value;
  }
  return "(not set)";
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_IMPORTER_IMPORT_TEST_SUPPORT_H_
