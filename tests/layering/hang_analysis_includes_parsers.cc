// The control for the hang checks: analysis/ may include every sub-directory below it (and
// core), so this compiles with the root of hang/analysis/. See CMakeLists.txt.
#include "strata/core/strings.h"
#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/collect/bundle.h"
#include "strata/hang/evidence/evidence.h"
#include "strata/hang/parsers/pyspy.h"
