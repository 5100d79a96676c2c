// The bundle manifest `strata collect` writes and `strata hang` reads.
#include <nlohmann/json.hpp>

#include "entries/fuzz_entries.h"
#include "strata/hang/collect/bundle.h"

namespace strata::fuzz {

using namespace strata::hang;

// What collect writes, hang reads back: a manifest that parses renders to one that parses to the
// same rendering.
void BundleManifest(std::string_view input) {
  auto manifest = ParseManifest(input, "manifest.json");
  if (!manifest.ok()) return;
  const std::string text = CheckJsonOutput(ManifestToJson(*manifest));
  auto again = ParseManifest(text, "manifest.json");
  if (!again.ok()) {
    // Only a string that was not UTF-8 (now U+FFFD) may change; the structure must read back.
    Require(false, "manifest: its own rendering parses back");
  }
  RequireSame(text, CheckJsonOutput(ManifestToJson(*again)),
              "manifest: render, parse, render is stable");
  for (const ProcessRecord& p : manifest->processes) {
    for (const std::string& fr : p.fr_files) {
      auto inside = PathInBundle("/bundle", fr);
      if (inside.ok())
        Require(inside->starts_with("/bundle/"), "manifest: paths stay in the bundle");
    }
  }
}

}  // namespace strata::fuzz
