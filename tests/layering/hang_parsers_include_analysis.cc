// Compiled by the layering check with the root of hang/parsers/: the parsers sit below the
// analysis, so this include must fail ("No such file or directory"). See CMakeLists.txt.
#include "strata/hang/analysis/verdict.h"
