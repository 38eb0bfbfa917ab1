//! The backoff sweep as a heatmap: spin settings across, thread counts down, each cell
//! coloured by its time relative to the fastest setting at that thread count.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use super::lines::short;
use super::{ChartError, SIZE, Svg};
use crate::sweep::{Sweep, label};

/// Colour of a cell whose time is `relative` times the row's best: green at 1, through yellow,
/// to red at 2 and beyond.
fn heat(relative: f64) -> RGBColor {
    let t = (relative - 1.0).clamp(0.0, 1.0);
    let channel = |from: f64, to: f64| {
        // Both ends are within 0..=255 and t within 0..=1, so the result is too.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let c = (from + (to - from) * t).round() as u8;
        c
    };
    if t < 0.5 {
        let t2 = t * 2.0;
        RGBColor(channel(80.0, 80.0 + 170.0 * t2), 190, 90)
    } else {
        RGBColor(250, channel(190.0 + 1.0, 60.0), 60)
    }
}

/// Draws the sweep; the text in each cell is ns per attempt.
///
/// # Errors
///
/// If plotters cannot draw the chart.
pub fn sweep_heatmap(sweep: &Sweep) -> Result<Svg, ChartError> {
    let columns = sweep.spins.len().max(1);
    let rows = sweep.threads.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "ns per attempt by spin retries before yielding (colour: vs the row's best)",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(
                // A segmented range has one segment per value, its end included.
                (0..columns - 1).into_segmented(),
                (0..rows - 1).into_segmented(),
            )?;
        let spin_labels: Vec<String> = sweep.spins.iter().map(|&s| label(s)).collect();
        let thread_labels: Vec<String> = sweep.threads.iter().map(u32::to_string).collect();
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("spin retries before the first yield")
            .y_desc("threads")
            .x_labels(columns)
            .y_labels(rows)
            .x_label_formatter(&|v| segment_label(v, &spin_labels))
            .y_label_formatter(&|v| segment_label(v, &thread_labels))
            .draw()?;
        for (row, &threads) in sweep.threads.iter().enumerate() {
            let Some(best) = sweep.best_at(threads) else {
                continue;
            };
            for (column, &spins) in sweep.spins.iter().enumerate() {
                let Some(ns) = sweep.get(spins, threads) else {
                    continue;
                };
                chart.draw_series([Rectangle::new(
                    [
                        (SegmentValue::Exact(column), SegmentValue::Exact(row)),
                        (
                            SegmentValue::Exact(column + 1),
                            SegmentValue::Exact(row + 1),
                        ),
                    ],
                    heat(ns / best).filled(),
                )])?;
                chart.draw_series([Text::new(
                    short(ns),
                    (SegmentValue::CenterOf(column), SegmentValue::CenterOf(row)),
                    ("sans-serif", 13).into_font().color(&BLACK),
                )])?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

fn segment_label(value: &SegmentValue<usize>, labels: &[String]) -> String {
    match value {
        SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
        _ => String::new(),
    }
}
