// py-spy dumps, text and JSON. Only the includes name where the parser lives.
#include <nlohmann/json.hpp>
#include <string>

#include "entries/fuzz_entries.h"
#include "strata/hang/parsers/frames_json.h"
#include "strata/hang/parsers/pyspy.h"

namespace strata::fuzz {
namespace {

using namespace strata::hang;

Json DumpsToJson(const std::vector<PySpyDump>& dumps) {
  Json out = Json::array();
  for (const PySpyDump& d : dumps) {
    Json dump;
    dump["pid"] = d.pid;
    dump["python_version"] = d.python_version;
    dump["program"] = d.program;
    dump["error"] = d.error;
    dump["truncated"] = d.truncated;
    Json threads = Json::array();
    for (const PyThread& t : d.threads) {
      Json thread;
      thread["thread_id"] = t.thread_id;
      thread["name"] = t.name;
      thread["idle"] = t.idle;
      thread["gil"] = t.gil;
      thread["frames"] = FramesToJson(t.frames);
      Json locals = Json::array();
      for (const PyFrame& f : t.frames) {
        for (const auto& [name, repr] : f.locals) locals.push_back({name, repr});
      }
      thread["locals"] = std::move(locals);
      threads.push_back(std::move(thread));
    }
    dump["threads"] = std::move(threads);
    out.push_back(std::move(dump));
  }
  return out;
}

void PySpy(std::string_view input) {
  auto first = ParsePySpy(input, "fuzz.txt");
  if (!first.ok()) return;
  const std::string text = CheckJsonOutput(DumpsToJson(*first));
  auto second = ParsePySpy(input, "fuzz.txt");
  Require(second.ok(), "py-spy: a second parse of the same input succeeds");
  RequireSame(text, CheckJsonOutput(DumpsToJson(*second)),
              "py-spy: parsing twice gives one result");
}

}  // namespace

// Text mode: a "Process" header first, so the sniffer never takes the input for JSON.
void PySpyText(std::string_view input) {
  PySpy("Process 1: python train.py\n" + std::string(input));
}

void PySpyJson(std::string_view input) { PySpy(input); }

}  // namespace strata::fuzz
