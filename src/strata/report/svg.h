// A small SVG writer for the report's figures: rectangles, lines and text in user units, each
// element able to carry the number it draws (data-key, data-value), so that a test can check a
// figure against the table printed beside it. Inline SVG: no script, no external resource.
#ifndef STRATA_REPORT_SVG_H_
#define STRATA_REPORT_SVG_H_

#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// &, <, >, " and ' as entities: text and attribute values from job files and logs.
std::string XmlEscape(std::string_view text);

/// The number a drawn element stands for: data-key="memory/after_init" data-value="33.61".
struct SvgDatum {
  std::string key;
  std::string value;  // as printed in the table beside the figure
};

class Svg {
 public:
  /// A figure of `width` x `height` user units; `title` is its accessible name.
  Svg(double width, double height, std::string_view title);

  void Rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view tooltip = {}, const SvgDatum& datum = {});
  void Line(double x1, double y1, double x2, double y2, std::string_view stroke,
            bool dashed = false);
  /// anchor: "start", "middle" or "end".
  void Text(double x, double y, std::string_view text, std::string_view anchor = "start",
            double size = 11, const SvgDatum& datum = {});
  void Circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = {},
              const SvgDatum& datum = {});

  /// A line through `xy` (x0, y0, x1, y1, ...).
  void Polyline(const std::vector<double>& xy, std::string_view stroke, double width = 1.2);

  std::string Render() const;
  /// Elements drawn so far (a figure with none is empty: the tests check every figure has some).
  int elements() const { return elements_; }

 private:
  std::string body_;
  double width_;
  double height_;
  std::string title_;
  int elements_ = 0;
};

}  // namespace strata

#endif  // STRATA_REPORT_SVG_H_
