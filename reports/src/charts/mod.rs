//! The report's charts, each drawn as an SVG document (text is left to the browser's fonts, so
//! no font file is needed).

// Charts turn counts and nanoseconds into f64 coordinates; a rounding in the 53rd bit is far
// below a pixel.
#![allow(clippy::cast_precision_loss)]

mod heatmap;
mod lines;
mod redis;
mod shared_sweep;
mod waits;
mod windows;

pub use self::heatmap::sweep_heatmap;
pub use self::lines::{Series, lines};
pub use self::redis::{REDIS_PERMIT_GROUP, shared_limiter_throughput};
pub use self::shared_sweep::shared_sweep;
pub use self::waits::wait_histogram;
pub use self::windows::{
    BOUNDARY_WINDOWS, WINDOWS_SHOWN, permits_near_boundaries, permits_per_window,
};

use std::fmt;

use plotters::chart::{ChartContext, SeriesLabelPosition};
use plotters::coord::CoordTranslate;
use plotters::prelude::DrawingBackend;
use plotters::style::{BLACK, Color, RGBColor, WHITE};

/// An SVG document.
pub type Svg = String;

/// Why a chart could not be drawn (plotters' drawing error, said in one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartError(pub String);

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw the chart: {}", self.0)
    }
}

impl std::error::Error for ChartError {}

impl<E: std::error::Error + Send + Sync> From<plotters::drawing::DrawingAreaErrorKind<E>>
    for ChartError
{
    fn from(err: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        ChartError(err.to_string())
    }
}

/// The size of every chart, in pixels.
pub const SIZE: (u32, u32) = (760, 420);

/// The colour of a limiter's series, the same on every chart: ours in blues, governor in
/// orange, the mutex window in grey.
pub fn colour(function: &str) -> RGBColor {
    match function {
        f if f.starts_with("ours-std") => RGBColor(107, 174, 214),
        f if f.starts_with("ours") => RGBColor(33, 102, 172),
        f if f.starts_with("governor") => RGBColor(230, 120, 20),
        f if f.starts_with("mutex") => RGBColor(110, 110, 110),
        _ => RGBColor(60, 160, 90),
    }
}

/// Draws a chart's legend at `position`, in the same box on every chart.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
