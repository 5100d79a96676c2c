// A table of the HTML report whose numeric cells carry the data-key of the figure element that
// draws the same number (report/svg.h), so figure and table can be checked against each other.
#ifndef STRATA_REPORT_HTML_TABLE_H_
#define STRATA_REPORT_HTML_TABLE_H_

#include <string>
#include <utility>
#include <vector>

namespace strata {

class HtmlTable {
 public:
  explicit HtmlTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  struct Cell {
    std::string text;
    std::string key;  // empty: a label, not a drawn number
  };
  void AddRow(std::vector<Cell> cells) { rows_.push_back(std::move(cells)); }
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace strata

#endif  // STRATA_REPORT_HTML_TABLE_H_
