// A streaming JSON reader for large profiler traces: it pulls bytes in chunks, checks the
// grammar, and hands each token to a handler without building a document. Written for speed
// (nlohmann's SAX lexer copies every byte into a token buffer and reads ~60 MB/s; a 1 GB trace
// must be read in 5 s): strings without escapes are passed as views into the chunk.
#ifndef STRATA_PROFILE_JSON_STREAM_H_
#define STRATA_PROFILE_JSON_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace strata::profile {

/// What the reader reports, in document order. Views are valid only during the call.
class JsonHandler {
 public:
  virtual ~JsonHandler() = default;
  virtual void StartObject() = 0;
  virtual void EndObject() = 0;
  virtual void StartArray() = 0;
  virtual void EndArray() = 0;
  virtual void Key(std::string_view key) = 0;
  virtual void String(std::string_view value) = 0;
  virtual void Integer(int64_t value) = 0;  // integers that fit; others come as Float
  virtual void Float(double value) = 0;
  virtual void Literal() = 0;  // true, false or null
};

/// Fills `buffer` with up to `capacity` bytes; returns how many (0 at the end, -1 on an error).
using ChunkReader = std::function<int64_t(char* buffer, size_t capacity)>;

struct JsonStreamError {
  int64_t byte = 0;     // 0-based offset of the offending byte (or of the end)
  std::string message;  // what was expected and what was found
  bool at_end = false;  // the input ended before the document did (a cut file)
};

/// Reads one JSON document; nullopt when it is complete and well formed. Nesting deeper than
/// `max_depth` is an error (memory stays bounded on hostile input).
std::optional<JsonStreamError> ReadJsonStream(const ChunkReader& read, JsonHandler& handler,
                                              size_t max_depth = 512);

}  // namespace strata::profile

#endif  // STRATA_PROFILE_JSON_STREAM_H_
