//! criterion's results, as written under `target/criterion`.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One benchmark's result: which it is, and its median time per iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The criterion group (`permit`, `contention-permit`, ...).
    pub group: String,
    /// The function within the group (`ours-system`, `governor-default`, ...).
    pub function: String,
    /// The parameter, if the benchmark has one (a thread count).
    pub parameter: Option<String>,
    /// The median time of one iteration, in nanoseconds.
    pub median_ns: f64,
    /// criterion's 95 % confidence interval of the median, in nanoseconds (the median itself
    /// at both ends when unknown).
    pub interval_ns: (f64, f64),
    /// Elements processed per iteration, if the benchmark declared a throughput.
    pub elements: Option<u64>,
}

impl Measurement {
    /// criterion's id of the benchmark: `group/function`, then `/parameter` if it has one.
    pub fn id(&self) -> String {
        match &self.parameter {
            Some(parameter) => format!("{}/{}/{parameter}", self.group, self.function),
            None => format!("{}/{}", self.group, self.function),
        }
    }

    /// Elements (or iterations) per second at the median time.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::Measurement;
    ///
    /// let m = Measurement {
    ///     group: "contention-permit".into(),
    ///     function: "ours-system".into(),
    ///     parameter: Some("2".into()),
    ///     median_ns: 50.0,
    ///     interval_ns: (48.0, 52.0),
    ///     elements: Some(2),
    /// };
    /// assert!((m.per_second() - 40e6).abs() < 1.0);
    /// ```
    pub fn per_second(&self) -> f64 {
        // Element counts are thread counts: far below 2^52, so exact in f64.
        #[allow(clippy::cast_precision_loss)]
        let elements = self.elements.unwrap_or(1) as f64;
        elements * 1e9 / self.median_ns
    }
}

/// Every result found under one criterion directory, keyed by (group, function, parameter).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchResults {
    measurements: BTreeMap<(String, String, Option<String>), Measurement>,
}

/// Why criterion's results could not be read.
#[derive(Debug)]
pub enum LoadError {
    /// A directory or file could not be read.
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file is not the JSON criterion writes.
    Json {
        /// The path.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
    /// A run's manifest is not the JSON `cargo xtask bench` writes.
    Manifest {
        /// The path.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            LoadError::Json { path, source } => {
                write!(f, "{} is not criterion's JSON: {source}", path.display())
            }
            LoadError::Manifest { path, source } => {
                write!(f, "{} is not a run's manifest: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Json { source, .. } | LoadError::Manifest { source, .. } => Some(source),
        }
    }
}

#[derive(Deserialize)]
struct BenchmarkFile {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    /// `{"Elements": n}`, `{"Bytes": n}`, ...: only elements are used.
    throughput: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct EstimatesFile {
    median: Estimate,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
    confidence_interval: Option<Interval>,
}

#[derive(Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

impl BenchResults {
    /// Reads every `new/benchmark.json` and its `new/estimates.json` under `dir` (criterion's
    /// output directory, `target/criterion`).
    ///
    /// # Errors
    ///
    /// If `dir` or a result file cannot be read, or a result file is not criterion's JSON.
    pub fn load(dir: &Path) -> Result<BenchResults, LoadError> {
        let mut results = BenchResults::default();
        for entry in walkdir::WalkDir::new(dir) {
            let entry = entry.map_err(|err| LoadError::Io {
                path: err.path().unwrap_or(dir).to_owned(),
                source: err.into(),
            })?;
            let path = entry.path();
            let in_new = path.parent().and_then(Path::file_name) == Some("new".as_ref());
            if !(in_new && path.file_name() == Some("benchmark.json".as_ref())) {
                continue;
            }
            let benchmark: BenchmarkFile = read_json(path)?;
            let estimates: EstimatesFile = read_json(&path.with_file_name("estimates.json"))?;
            results.insert(Measurement {
                group: benchmark.group_id,
                function: benchmark.function_id.unwrap_or_default(),
                parameter: benchmark.value_str,
                median_ns: estimates.median.point_estimate,
                interval_ns: estimates.median.confidence_interval.map_or(
                    (
                        estimates.median.point_estimate,
                        estimates.median.point_estimate,
                    ),
                    |i| (i.lower_bound, i.upper_bound),
                ),
                elements: benchmark
                    .throughput
                    .as_ref()
                    .and_then(|t| t.get("Elements"))
                    .and_then(serde_json::Value::as_u64),
            });
        }
        Ok(results)
    }

    /// Adds (or replaces) one result.
    pub fn insert(&mut self, measurement: Measurement) {
        let key = (
            measurement.group.clone(),
            measurement.function.clone(),
            measurement.parameter.clone(),
        );
        self.measurements.insert(key, measurement);
    }

    /// The result of `group`/`function` without a parameter.
    pub fn get(&self, group: &str, function: &str) -> Option<&Measurement> {
        self.measurements
            .get(&(group.to_owned(), function.to_owned(), None))
    }

    /// The result of `group`/`function` with `parameter`.
    pub fn get_with(&self, group: &str, function: &str, parameter: &str) -> Option<&Measurement> {
        self.measurements.get(&(
            group.to_owned(),
            function.to_owned(),
            Some(parameter.to_owned()),
        ))
    }

    /// Every result of `group`, ordered by function then parameter.
    pub fn group<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a Measurement> + 'a {
        self.measurements.values().filter(move |m| m.group == group)
    }

    /// Every result, ordered by group, function, then parameter.
    pub fn iter(&self) -> impl Iterator<Item = &Measurement> {
        self.measurements.values()
    }

    /// Whether no result was found.
    pub fn is_empty(&self) -> bool {
        self.measurements.is_empty()
    }

    /// How many results there are.
    pub fn len(&self) -> usize {
        self.measurements.len()
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let text = fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| LoadError::Json {
        path: path.to_owned(),
        source,
    })
}
