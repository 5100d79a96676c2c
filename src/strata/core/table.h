// Plain-text tables with units in the headers (nccl-tests style) and right-aligned numbers.
#ifndef STRATA_CORE_TABLE_H_
#define STRATA_CORE_TABLE_H_

#include <string>
#include <vector>

namespace strata {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;  // with the unit: "weights (GB)"
  Align align = Align::kRight;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns);
  /// A row must have one cell per column.
  void AddRow(std::vector<std::string> cells);
  /// A horizontal rule before the next row (e.g. above a total).
  void AddSeparator();
  /// Header, rule, rows; each line indented by `indent` spaces and ended by '\n'.
  std::string Render(int indent = 2) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

}  // namespace strata

#endif  // STRATA_CORE_TABLE_H_
