// The table of job-file fields: the one list the parser's `--set` accepts, "did you mean" draws
// on, and docs/job-file.md is generated from (tests/job/job_fields_test.cc fails when the
// document and the table differ, and when an example value does not parse).
#ifndef STRATA_JOB_JOB_FIELDS_H_
#define STRATA_JOB_JOB_FIELDS_H_

#include <string>
#include <vector>

namespace strata {

struct JobField {
  const char* key;            // dotted, as in --set: "parallel.tp"
  const char* type;           // "integer >= 1", "token count", "fp32 | bf16", ...
  const char* unit;           // "GPUs", "samples", "tokens", "" when none
  const char* default_value;  // "required", "1", "derived: ..."
  const char* megatron;       // the megatron-core / Megatron-LM argument, "" when none
  const char* torchtitan;     // the torchtitan job-config option, "" when none
  const char* example;        // a value that parses (docs and the drift test use it)
  const char* meaning;
};

/// Every field, in the order of the document.
const std::vector<JobField>& JobFields();

/// docs/job-file.md, generated from JobFields().
std::string JobFieldsMarkdown();

}  // namespace strata

#endif  // STRATA_JOB_JOB_FIELDS_H_
