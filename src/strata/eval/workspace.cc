#include "strata/eval/workspace.h"

#include <string>

#include "strata/core/file_io.h"
#include "strata/job/engine_chain.h"

namespace strata {

Result<Workspace> Workspace::Load() {
  Workspace w;
  STRATA_ASSIGN_OR_RETURN(w.links, LoadInterconnects());
  // data/frameworks.yaml feeds two parsers: the engines that the memory constants carry (what
  // each framework runs under each sharding mode) and the step's framework catalog. Read once.
  const std::string memory_path = DataDir() + "/memory_overheads.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string memory_text, ReadFile(memory_path));
  STRATA_ASSIGN_OR_RETURN(w.memory, ParseMemoryConstants(memory_text, memory_path));
  const std::string frameworks_path = DataDir() + "/frameworks.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string frameworks_text, ReadFile(frameworks_path));
  STRATA_ASSIGN_OR_RETURN(w.memory.engines,
                          ParseFrameworkEnginesText(frameworks_text, frameworks_path));
  STRATA_ASSIGN_OR_RETURN(w.frameworks, ParseFrameworkCatalog(frameworks_text, frameworks_path));
  STRATA_ASSIGN_OR_RETURN(w.efficiency, LoadKernelEfficiency());
  STRATA_ASSIGN_OR_RETURN(w.mfu_ceilings, LoadMfuCeilings());
  STRATA_ASSIGN_OR_RETURN(w.step_errors, LoadStepErrorBands());
  STRATA_ASSIGN_OR_RETURN(w.step_layout_errors, LoadStepLayoutErrors());
  return w;
}

}  // namespace strata
