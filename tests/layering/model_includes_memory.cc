// Compiled by the layering check with the model module's include root: model/ sits below
// memory/, so this include must fail ("No such file or directory"). See CMakeLists.txt.
#include "strata/memory/ledger.h"
