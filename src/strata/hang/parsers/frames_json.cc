#include "strata/hang/parsers/frames_json.h"

#include <nlohmann/json.hpp>

namespace strata::hang {

Json FramesToJson(const std::vector<PyFrame>& frames) {
  Json out = Json::array();
  for (const PyFrame& f : frames) {
    out.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}});
  }
  return out;
}

}  // namespace strata::hang
