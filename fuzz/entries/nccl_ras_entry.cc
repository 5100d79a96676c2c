// NCCL RAS output, text and JSON.
#include <nlohmann/json.hpp>

#include "entries/fuzz_entries.h"
#include "strata/hang/parsers/nccl_ras.h"

namespace strata::fuzz {

using namespace strata::hang;

void NcclRas(std::string_view input) {
  auto first = ParseNcclRas(input, "fuzz.ras");
  if (!first.ok()) return;
  const std::string text = CheckJsonOutput(ToJson(*first));
  auto second = ParseNcclRas(input, "fuzz.ras");
  Require(second.ok(), "RAS: a second parse succeeds");
  RequireSame(text, CheckJsonOutput(ToJson(*second)), "RAS: parsing twice gives one result");
}

}  // namespace strata::fuzz
