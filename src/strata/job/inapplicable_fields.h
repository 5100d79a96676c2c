// Fields a job gives that do nothing for it: read, valid, and ignored by every model. Each one
// is worth a warning naming the field and why, since a user who set it expects it to count.
#ifndef STRATA_JOB_INAPPLICABLE_FIELDS_H_
#define STRATA_JOB_INAPPLICABLE_FIELDS_H_

#include <string>
#include <vector>

#include "strata/job/engine_chain.h"
#include "strata/job/job_spec.h"
#include "strata/model/model_config.h"

namespace strata {

/// One sentence per such field, naming it: a `frozen:` module kind the model does not have,
/// sharding.prefetch_layers under a mode that gathers no weights (not zero3 / fsdp2), a
/// framework.version newer than the latest release data/frameworks.yaml knows (whose behaviour
/// is then used).
std::vector<std::string> InapplicableFields(const JobSpec& spec, const ModelConfig& model,
                                            const FrameworkEngines& engines);

}  // namespace strata

#endif  // STRATA_JOB_INAPPLICABLE_FIELDS_H_
