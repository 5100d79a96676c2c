#include "strata/eval/workspace.h"

namespace strata {

Result<Workspace> Workspace::Load() {
  Workspace w;
  STRATA_ASSIGN_OR_RETURN(w.links, LoadInterconnects());
  STRATA_ASSIGN_OR_RETURN(w.memory, LoadMemoryConstants());
  STRATA_ASSIGN_OR_RETURN(w.efficiency, LoadKernelEfficiency());
  STRATA_ASSIGN_OR_RETURN(w.mfu_ceilings, LoadMfuCeilings());
  STRATA_ASSIGN_OR_RETURN(w.frameworks, LoadFrameworkCatalog());
  return w;
}

}  // namespace strata
