//! The shared limiter (`fixed-window-redis`) against a local Redis, beside envoy's pattern and
//! the naive one: permitted attempts per second by number of concurrent callers.

use plotters::prelude::*;

use super::{ChartError, SIZE, Svg, draw_legend};
use crate::bench_results::BenchResults;

/// The criterion group the `redis` bench writes its permitted attempts to.
pub const REDIS_PERMIT_GROUP: &str = "redis-permit";

/// The callers measured, in the order drawn.
const CALLERS: [&str; 3] = ["1-task", "16-tasks", "4-threads"];

/// The patterns drawn, with their colours: ours in blue as on every chart, envoy's pattern in
/// orange, the naive one in grey.
const PATTERNS: [(&str, RGBColor); 3] = [
    ("shared", RGBColor(33, 102, 172)),
    ("envoy", RGBColor(230, 120, 20)),
    ("naive", RGBColor(110, 110, 110)),
];

/// Grouped bars of permitted attempts per second (all callers together) for each pattern, per
/// number of callers, from `results`' `redis-permit` group; a pattern not measured for some
/// callers (only the shared limiter runs on threads) leaves its bar out.
///
/// # Errors
///
/// If plotters cannot draw the chart.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::{BenchResults, Measurement};
/// use fixed_window_reports::charts::shared_limiter_throughput;
///
/// let mut results = BenchResults::default();
/// for (function, ns) in [("shared", 40_000.0), ("envoy", 25_000.0)] {
///     results.insert(Measurement {
///         group: "redis-permit".into(),
///         function: function.into(),
///         parameter: Some("1-task".into()),
///         median_ns: ns,
///         interval_ns: (ns, ns),
///         elements: None,
///     });
/// }
/// let svg = shared_limiter_throughput(&results)?;
/// assert!(svg.starts_with("<svg") && svg.contains("envoy"));
/// # Ok::<(), fixed_window_reports::charts::ChartError>(())
/// ```
pub fn shared_limiter_throughput(results: &BenchResults) -> Result<Svg, ChartError> {
    let bars: Vec<(usize, usize, f64)> = CALLERS
        .iter()
        .enumerate()
        .flat_map(|(slot, callers)| {
            PATTERNS
                .iter()
                .enumerate()
                .filter_map(move |(series, (function, _))| {
                    results
                        .get_with(REDIS_PERMIT_GROUP, function, callers)
                        .map(|m| (slot, series, m.per_second()))
                })
        })
        .collect();
    let y_max = bars.iter().map(|bar| bar.2).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let width = 0.8 / PATTERNS.len() as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "shared limiter on a local Redis: permitted attempts per second",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..CALLERS.len() as f64 - 0.5, 0.0..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(CALLERS.len())
            .x_label_formatter(&|x| {
                let slot = x.round();
                CALLERS
                    .iter()
                    .enumerate()
                    .find(|(i, _)| (*i as f64 - slot).abs() < f64::EPSILON)
                    .map_or_else(String::new, |(_, callers)| (*callers).to_owned())
            })
            .x_desc("concurrent callers over one connection")
            .y_desc("attempts per second")
            .y_label_formatter(&|y| super::lines::short(*y))
            .draw()?;
        for (series, (function, colour)) in PATTERNS.iter().enumerate() {
            let left = |slot: usize| slot as f64 - 0.4 + series as f64 * width;
            chart
                .draw_series(
                    bars.iter()
                        .filter(|bar| bar.1 == series)
                        .map(|&(slot, _, rate)| {
                            Rectangle::new(
                                [(left(slot), 0.0), (left(slot) + width, rate)],
                                colour.filled(),
                            )
                        }),
                )?
                .label(*function)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled())
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present()?;
    }
    Ok(svg)
}
