#include "strata/report/svg.h"

#include <fmt/format.h>

namespace strata {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string DatumAttributes(const SvgDatum& d) {
  if (d.key.empty()) return "";
  return fmt::format(R"( data-key="{}" data-value="{}")", XmlEscape(d.key), XmlEscape(d.value));
}

std::string Tooltip(std::string_view tooltip) {
  return tooltip.empty() ? "" : fmt::format("<title>{}</title>", XmlEscape(tooltip));
}

}  // namespace

Svg::Svg(double width, double height, std::string_view title)
    : width_(width), height_(height), title_(title) {}

void Svg::Rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view tooltip, const SvgDatum& datum) {
  body_ += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}>{}</rect>)", x, y,
      w, h, fill, DatumAttributes(datum), Tooltip(tooltip));
  body_ += '\n';
  ++elements_;
}

void Svg::Line(double x1, double y1, double x2, double y2, std::string_view stroke, bool dashed) {
  body_ += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}"{}/>)",
                       x1, y1, x2, y2, stroke, dashed ? R"( stroke-dasharray="4 3")" : "");
  body_ += '\n';
  ++elements_;
}

void Svg::Text(double x, double y, std::string_view text, std::string_view anchor, double size,
               const SvgDatum& datum) {
  body_ +=
      fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}" font-size="{:.0f}"{}>{}</text>)",
                  x, y, anchor, size, DatumAttributes(datum), XmlEscape(text));
  body_ += '\n';
  ++elements_;
}

void Svg::Circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip,
                 const SvgDatum& datum) {
  body_ += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}"{}>{}</circle>)", cx,
                       cy, r, fill, DatumAttributes(datum), Tooltip(tooltip));
  body_ += '\n';
  ++elements_;
}

void Svg::Polyline(const std::vector<double>& xy, std::string_view stroke, double width) {
  std::string points;
  for (size_t i = 0; i + 1 < xy.size(); i += 2) {
    points += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", xy[i], xy[i + 1]);
  }
  body_ += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="{:.1f}"/>)",
                       points, stroke, width);
  body_ += '\n';
  ++elements_;
}

std::string Svg::Render() const {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {:.0f} {:.0f}" width="{:.0f}" height="{:.0f}" role="img" font-family="sans-serif"><title>{}</title>
{}</svg>
)",
      width_, height_, width_, height_, XmlEscape(title_), body_);
}

}  // namespace strata
