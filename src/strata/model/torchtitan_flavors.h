// torchtitan's model names (registry name + flavor, "llama3" + "8B") -> strata's catalog
// models, from data/models/torchtitan_flavors.yaml: the importer reads them from a TOML's
// [model] section, the log analyser from torchtitan's "Building llama3 8B with ..." line.
#ifndef STRATA_MODEL_TORCHTITAN_FLAVORS_H_
#define STRATA_MODEL_TORCHTITAN_FLAVORS_H_

#include <string>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct TitanFlavor {
  std::string name;    // "llama3"
  std::string flavor;  // "8B"
  std::string model;   // "llama-3.1-8b"; empty where the catalog has none
  std::string why;     // why there is none ("torchtitan's test configuration ...")
};

Result<std::vector<TitanFlavor>> ParseTitanFlavors(const std::string& yaml_text,
                                                   const std::string& file);

/// The catalog model of torchtitan's `name` + `flavor`, from the table (read once). Unknown to
/// the table or mapped to none: an error naming "name/flavor", `where` it was read, and why,
/// with the hint to pass --model.
Result<std::string> TitanCatalogModel(const std::string& name, const std::string& flavor,
                                      const std::string& where);

}  // namespace strata

#endif  // STRATA_MODEL_TORCHTITAN_FLAVORS_H_
