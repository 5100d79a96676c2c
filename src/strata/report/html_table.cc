#include "strata/report/html_table.h"

#include <fmt/format.h>

#include "strata/report/svg.h"

namespace strata {

std::string HtmlTable::Render() const {
  std::string out = "<table>\n<thead><tr>";
  for (const auto& h : headers_) out += "<th>" + XmlEscape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows_) {
    out += "<tr>";
    for (const auto& c : row) {
      if (c.key.empty()) {
        out += "<td>" + XmlEscape(c.text) + "</td>";
      } else {
        out += fmt::format(R"(<td class="num" data-key="{}" data-value="{}">{}</td>)",
                           XmlEscape(c.key), XmlEscape(c.text), XmlEscape(c.text));
      }
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace strata
