// Compiled by the layering check with the root of hang/evidence/: the evidence types are plain
// data at the bottom of hang/, so including a parser must fail. See CMakeLists.txt.
#include "strata/hang/parsers/pyspy.h"
