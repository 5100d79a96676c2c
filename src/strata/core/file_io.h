// Reading inputs (never modified) and writing outputs atomically (temp file + rename).
#ifndef STRATA_CORE_FILE_IO_H_
#define STRATA_CORE_FILE_IO_H_

#include <cstddef>
#include <string>

#include "strata/core/result.h"

namespace strata {

/// Default cap on one input file: dumps and logs larger than this are an error, not an OOM.
inline constexpr size_t kMaxInputFileBytes = size_t{1} << 30;

/// The whole file; errors name the path and the reason (missing, a directory, too large, ...).
/// Only regular files are opened (non-blocking, so a FIFO swapped in cannot hang), and the size
/// is checked before a byte is read.
Result<std::string> ReadFile(const std::string& path, size_t max_bytes = kMaxInputFileBytes);

/// Writes to "path.tmp.<pid>" then renames over `path`, so readers never see half a file.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

/// The data/ directory: $STRATA_DATA_DIR, else the source tree's data/ (compiled in).
std::string DataDir();

}  // namespace strata

#endif  // STRATA_CORE_FILE_IO_H_
