// A safe reader for the pickles PyTorch's Flight Recorder writes. It decodes protocol 2 (and the
// protocol 4/5 opcodes Python adds when a dump is re-saved) into plain JSON values: dicts, lists,
// tuples (as arrays), strings, integers, floats, booleans and None. It never imports or calls
// anything: an opcode that names a Python callable (GLOBAL, REDUCE, BUILD, INST, OBJ, PERSID, ...)
// is an error naming the opcode and its byte offset, except the few torch.jit._pickle functions
// that older torch wraps around plain lists and dicts, which are read as the identity.
//
// Hostile input is bounded: the input size, the nesting depth of the result, the number of values
// built and their bytes (a memo reference counts every time it is expanded) all have limits, and no
// allocation is sized by a length prefix before the bytes it promises have been seen.
#ifndef STRATA_HANG_PARSERS_PICKLE_READER_H_
#define STRATA_HANG_PARSERS_PICKLE_READER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "strata/core/result.h"

namespace strata::hang {

struct PickleLimits {
  // A 2000-entry ring buffer with stacks is a few MB; 256 MiB leaves room for huge buffers.
  size_t max_input_bytes = size_t{256} << 20;
  // Flight Recorder nests five deep (dump > entries > entry > frames > frame); 100 is generous
  // and keeps the recursive conversion far from the thread's stack limit.
  size_t max_depth = 100;
  // Values in the decoded result, counting each expansion of a shared (memoized) value. Bounds
  // both the decoder's own storage and "billion laughs" pickles that reuse one list many times.
  size_t max_values = size_t{8} << 20;
  // Bytes of the decoded result (16 per value plus the text of every string and key, counting
  // each use of a shared string): a memoized 1 MiB string reused 2^10 times is 1 GiB of JSON.
  // The budget is linear in the input, `max_expansion` decoded bytes per pickle byte but at least
  // `min_decoded_bytes`, and never more than `max_decoded_bytes`. A Flight Recorder dump shares
  // few values, so it expands a few times at most. The floor is small on purpose: with 16 MiB a
  // 327-byte pickle still built a million lists (fuzzing: 14 s under ASan).
  size_t max_expansion = 64;
  size_t min_decoded_bytes = size_t{1} << 20;
  size_t max_decoded_bytes = size_t{512} << 20;
};

/// Decodes one pickle into compact JSON text (tuples become arrays; dict keys must be strings or
/// integers, which become their decimal text; keys come out sorted, so a hostile dict with
/// millions of keys costs n log n, not n^2). Text, not a JSON library's value: the Flight
/// Recorder reader parses it exactly as it parses torch's JSON dumps, one path for both formats,
/// and this header pulls no JSON library into its includers.
/// `file` only labels errors, which read "<file>: byte <offset>: <what>, expected <what>".
Result<std::string> ReadPickle(std::string_view bytes, const std::string& file,
                               const PickleLimits& limits = {});

/// The pickle opcode's name for a byte ("GLOBAL" for 'c'), or "" when the byte is no opcode.
std::string_view PickleOpcodeName(unsigned char opcode);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_PICKLE_READER_H_
