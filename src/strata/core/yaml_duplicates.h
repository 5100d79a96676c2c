// A key written twice in one YAML mapping: yaml-cpp keeps both pairs and every lookup returns
// the first, so `tp: 2` ... `tp: 4` ran as TP 2 without a word. Every YAML reader refuses it.
#ifndef STRATA_CORE_YAML_DUPLICATES_H_
#define STRATA_CORE_YAML_DUPLICATES_H_

#include <yaml-cpp/yaml.h>

#include <string>

#include "strata/core/result.h"

namespace strata {

/// Fails on the first mapping, at any depth, that holds the same key twice, naming both lines.
Status CheckNoDuplicateKeys(const YAML::Node& root, const std::string& file);

}  // namespace strata

#endif  // STRATA_CORE_YAML_DUPLICATES_H_
