//! The HTML page: one module per section, each drawn from whatever inputs exist and each
//! saying when, by which command and in which mode its figures were produced.

mod backoff;
mod cluster;
mod contention;
mod keyed;
mod limiters;
mod mutants;
mod provenance;
mod server_time;
mod shared;
mod simulation;
mod simulator;
pub(crate) mod table;
mod targets;

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use html_escape::encode_text as esc;

use crate::bench_runs::BenchRun;
use crate::charts::{ChartError, Svg};
use crate::inputs::Inputs;
use crate::page::table::Table;

pub use crate::page::simulator::SIMULATOR_TARGET;

/// The rendered report: the page, with its charts inline, and each chart as its own file.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The page.
    pub html: String,
    /// (file name, SVG) of each chart drawn.
    pub charts: Vec<(String, Svg)>,
    /// Inputs missing and charts that could not be drawn, one sentence each (also on the page).
    pub missing: Vec<String>,
    /// Figures the page warns about: results of unknown origin, a summary and a trace from
    /// different sweeps (also on the page).
    pub warnings: Vec<String>,
}

impl Report {
    /// Writes `index.html` and the charts' SVG files into `dir`, creating it.
    ///
    /// # Errors
    ///
    /// If the directory or a file cannot be written.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        fs::create_dir_all(dir)?;
        fs::write(dir.join("index.html"), &self.html)?;
        for (name, svg) in &self.charts {
            fs::write(dir.join(name), svg)?;
        }
        Ok(())
    }
}

/// The page being written: its body so far, and the report it will become.
struct Page {
    body: String,
    report: Report,
}

impl Page {
    fn html(&mut self, html: &str) {
        self.body.push_str(html);
    }

    fn heading(&mut self, level: u8, text: &str) {
        let _ = write!(self.body, "<h{level}>{}</h{level}>", esc(text));
    }

    /// A paragraph of HTML, as written.
    fn paragraph(&mut self, html: &str) {
        let _ = write!(self.body, "<p>{html}</p>");
    }

    /// Where the section's figures came from (HTML).
    fn provenance(&mut self, html: &str) {
        let _ = write!(self.body, "<p class=\"provenance\">{html}</p>");
    }

    /// The smoke-data reminder, if `run` was quick.
    fn smoke(&mut self, run: &BenchRun) {
        if run.is_quick() {
            let _ = write!(
                self.body,
                "<p class=\"smoke\">{}</p>",
                provenance::SMOKE_SECTION
            );
        }
    }

    /// A warning (text), on the page and in [`Report::warnings`].
    fn warning(&mut self, line: &str) {
        let _ = write!(self.body, "<p class=\"warning\">Warning: {}</p>", esc(line));
        self.report.warnings.push(line.to_owned());
    }

    fn table(&mut self, table: &Table) {
        self.body.push_str(&table.to_html());
    }

    fn chart(&mut self, file: &str, drawn: Result<Svg, ChartError>) {
        match drawn {
            Ok(svg) => {
                let _ = write!(
                    self.body,
                    "<figure>{svg}<figcaption><a href=\"{file}\">{file}</a></figcaption></figure>"
                );
                self.report.charts.push((file.to_owned(), svg));
            }
            Err(err) => self.missing(&format!("{file}: {err}")),
        }
    }

    fn missing(&mut self, line: &str) {
        let _ = write!(self.body, "<p class=\"missing\">Missing: {}</p>", esc(line));
        self.report.missing.push(line.to_owned());
    }
}

/// Renders the report from `inputs`: sections whose input is missing say so, and every
/// section says where its figures came from.
///
/// # Examples
///
/// With nothing measured, the page still renders and names what is missing.
///
/// ```
/// use fixed_window_reports::{Inputs, render};
///
/// let report = render(&Inputs { missing: vec!["no benchmarks".into()], ..Inputs::default() });
/// assert!(report.html.contains("no benchmarks"));
/// assert!(report.charts.is_empty());
/// ```
pub fn render(inputs: &Inputs) -> Report {
    let mut page = Page {
        body: String::new(),
        report: Report::default(),
    };
    page.heading(1, "fixed-window: benchmarks and simulation");
    if inputs.missing.is_empty() {
        page.paragraph("Every input was found.");
    } else {
        page.heading(2, "Missing inputs");
        page.html("<ul>");
        for line in &inputs.missing {
            let _ = write!(page.body, "<li class=\"missing\">{}</li>", esc(line));
            page.report.missing.push(line.clone());
        }
        page.html("</ul>");
    }
    if let Some(runs) = &inputs.bench {
        targets::section(&mut page, runs);
        if let Some(primary) = runs.primary() {
            limiters::section(&mut page, primary, runs);
            contention::section(&mut page, primary, runs);
            backoff::section(&mut page, primary, runs);
            keyed::section(&mut page, primary, runs);
            shared::section(&mut page, primary, runs);
            cluster::section(&mut page, primary, runs);
            server_time::section(&mut page, runs);
        }
    } else {
        page.heading(2, "Benchmarks");
        page.html(
            "<p class=\"missing\">No benchmark results: run <code>cargo xtask bench</code>.</p>",
        );
    }
    page.heading(2, "Simulator");
    simulator::section(&mut page, inputs.bench.as_ref());
    simulation::section(&mut page, inputs);
    shared::simulated(&mut page, inputs.shared_summary.as_ref());
    mutants::section(&mut page, inputs);
    page.report.html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fixed-window report</title><style>{STYLE}</style></head><body>{}</body></html>\n",
        page.body
    );
    page.report
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th:first-child,td:first-child{text-align:left}.met{color:#1a7f37}.miss{color:#c62828;font-weight:bold}\
.missing{color:#8a5a00}figure{margin:1em 0}figcaption{font-size:.8em;color:#666}.best{font-weight:bold;background:#e6f4ea}\
.provenance{font-size:.9em;color:#555;border-left:3px solid #ccc;padding-left:.6em}\
.smoke,.warning{background:#fff4e5;border-left:3px solid #e68a00;padding:.4em .6em}";
