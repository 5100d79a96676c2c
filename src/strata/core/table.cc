#include "strata/core/table.h"

#include <algorithm>

#include "strata/core/check.h"

namespace strata {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) {
  STRATA_CHECK(cells.size() == columns_.size());
  rows_.push_back(std::move(cells));
}

void Table::AddSeparator() { rows_.emplace_back(); }

std::string Table::Render(int indent) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].header.size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());

  const std::string pad(static_cast<size_t>(std::max(indent, 0)), ' ');
  auto cell = [&](const std::string& text, size_t c) {
    const std::string fill(width[c] - text.size(), ' ');
    return columns_[c].align == Align::kRight ? fill + text : text + fill;
  };
  auto rule = [&] {
    std::string line = pad;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) line += "  ";
      line += std::string(width[c], '-');
    }
    return line + "\n";
  };
  std::string out = pad;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c) out += "  ";
    out += cell(columns_[c].header, c);
  }
  // Trailing spaces are noise in golden files.
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n" + rule();
  for (const auto& row : rows_) {
    if (row.empty()) {
      out += rule();
      continue;
    }
    std::string line = pad;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      line += cell(row[c], c);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace strata
