// The control for model_includes_memory.cc: memory/ may include model/ (and, through job/, core
// and hw), so this compiles with the memory module's include root. See CMakeLists.txt.
#include "strata/memory/ledger.h"
#include "strata/model/model_config.h"
