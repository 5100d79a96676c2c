// The model catalog's index (data/models/catalog.yaml): for each shipped config, the sizes its
// name advertises ("35B-A3B") with a source. The 6N-nominal convention uses them.
#ifndef STRATA_MODEL_MODEL_CATALOG_H_
#define STRATA_MODEL_MODEL_CATALOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct CatalogModel {
  std::string name;            // the config's file stem in data/models/
  int64_t nominal_params = 0;  // total, as the name advertises
  int64_t nominal_active_params = 0;
  std::string source;
};

Result<std::vector<CatalogModel>> ParseModelCatalog(const std::string& yaml_text,
                                                    const std::string& file);
/// data/models/catalog.yaml via DataDir().
Result<std::vector<CatalogModel>> LoadModelCatalog();
/// nullopt when the model is not in the index (a config given by path).
Result<std::optional<CatalogModel>> FindCatalogModel(const std::string& name);

}  // namespace strata

#endif  // STRATA_MODEL_MODEL_CATALOG_H_
