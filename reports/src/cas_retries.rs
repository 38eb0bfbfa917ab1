//! Lost compare-and-set races per attempt, as `cargo xtask bench` counts them.

use serde::Deserialize;

/// The count at each thread count: how many attempts, and how many of their compare-and-sets
/// lost a race and were retried.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RetryPoint {
    /// Threads hammering one limiter.
    pub threads: u32,
    /// Attempts made, all threads together.
    pub attempts: u64,
    /// Retries after a lost race, all threads together.
    pub retries: u64,
}

/// The retry counts of one run (`target/cas-retries.json`).
///
/// They are counted by the limiter itself, built with its `stats` feature: a relaxed counter
/// bumped on every compare-and-set lost to another caller.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CasRetries {
    /// The backoff's spin setting during the count.
    pub backoff_spins: u32,
    /// One point per thread count.
    pub points: Vec<RetryPoint>,
}

impl CasRetries {
    /// Parses the JSON `cargo xtask bench` writes.
    ///
    /// # Errors
    ///
    /// If the text is not that JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::CasRetries;
    ///
    /// let counts = CasRetries::parse(
    ///     r#"{"backoff_spins":0,"points":[{"threads":2,"attempts":1000,"retries":20}]}"#,
    /// )?;
    /// assert_eq!(counts.per_attempt(), vec![(2, 0.02)]);
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<CasRetries, String> {
        serde_json::from_str(text).map_err(|err| format!("not the retry count's JSON: {err}"))
    }

    /// (threads, retries per attempt), for points with at least one attempt.
    pub fn per_attempt(&self) -> Vec<(u32, f64)> {
        self.points
            .iter()
            .filter(|p| p.attempts > 0)
            .map(|p| {
                // Counts far below 2^52: exact in f64.
                #[allow(clippy::cast_precision_loss)]
                let ratio = p.retries as f64 / p.attempts as f64;
                (p.threads, ratio)
            })
            .collect()
    }
}
