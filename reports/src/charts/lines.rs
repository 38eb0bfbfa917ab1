//! A line chart of named series.

use plotters::prelude::*;

use super::{ChartError, SIZE, Svg, colour, draw_legend};

/// One named line: its points (x, y).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's name; also picks the colour (see [`colour`](super::colour)).
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` as lines with markers, from zero up on both axes.
///
/// # Errors
///
/// If plotters cannot draw the chart.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::charts::{Series, lines};
///
/// let svg = lines("ns per attempt", "threads", "ns", &[Series {
///     name: "ours-system".into(),
///     points: vec![(1.0, 20.0), (2.0, 45.0)],
/// }])?;
/// assert!(svg.starts_with("<svg") && svg.contains("ours-system"));
/// # Ok::<(), fixed_window_reports::charts::ChartError>(())
/// ```
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<Svg, ChartError> {
    let points = series.iter().flat_map(|s| &s.points);
    // An axis of all zeros still needs a length.
    let nonzero = |max: f64| if max > 0.0 { max } else { 1.0 };
    let x_max = nonzero(points.clone().map(|p| p.0).fold(0.0, f64::max));
    let y_max = nonzero(points.map(|p| p.1).fold(0.0, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max * 1.1)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&|y| short(*y))
            .draw()?;
        for s in series {
            let style = colour(&s.name).stroke_width(2);
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, 3, colour(&s.name).filled())),
            )?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present()?;
    }
    Ok(svg)
}

/// A number in a few characters: 1234567 → "1.23M".
pub(crate) fn short(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1e9 {
        format!("{:.2}G", value / 1e9)
    } else if magnitude >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else if magnitude >= 1e4 {
        format!("{:.1}k", value / 1e3)
    } else if magnitude >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 1.0 {
        format!("{value:.1}")
    } else if magnitude >= 0.01 {
        format!("{value:.3}")
    } else {
        format!("{value:.5}")
    }
}
