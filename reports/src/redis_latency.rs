//! The shared limiter's attempts as the `redis` bench records them beside criterion's figures:
//! p50 and p99 of every attempt's own duration, and the commands the clients sent per attempt.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One benchmark's attempts (an entry of `redis-latency.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Attempts {
    /// The median attempt's duration, in nanoseconds.
    pub p50_ns: u64,
    /// The 99th percentile of the attempts' durations, in nanoseconds.
    pub p99_ns: u64,
    /// Attempts timed (warm-up included).
    pub samples: u64,
    /// Commands the clients sent during the attempts watched by `MONITOR`, if counted.
    #[serde(default)]
    pub commands: Option<u64>,
    /// Attempts watched by `MONITOR`, if counted.
    #[serde(default)]
    pub counted_attempts: Option<u64>,
}

impl Attempts {
    /// Commands sent per attempt, if counted over at least one attempt.
    pub fn commands_per_attempt(&self) -> Option<f64> {
        let attempts = self.counted_attempts.filter(|&n| n > 0)?;
        // Counts of a few hundred: exact in f64.
        #[allow(clippy::cast_precision_loss)]
        Some(self.commands? as f64 / attempts as f64)
    }
}

/// The `redis` bench's `redis-latency.json`: [`Attempts`] by criterion's benchmark id
/// (`redis-permit/shared/1-task`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisLatency {
    /// The entries, by benchmark id.
    pub benchmarks: BTreeMap<String, Attempts>,
}

impl RedisLatency {
    /// Parses the JSON the `redis` bench writes.
    ///
    /// # Errors
    ///
    /// If the text is not that JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::RedisLatency;
    ///
    /// let latency = RedisLatency::parse(
    ///     r#"{"redis-permit/shared/1-task": {"p50_ns": 40000, "p99_ns": 90000, "samples": 1500,
    ///         "commands": 100, "counted_attempts": 100}}"#,
    /// )?;
    /// let shared = latency.get("redis-permit/shared/1-task").unwrap();
    /// assert_eq!((shared.p50_ns, shared.commands_per_attempt()), (40_000, Some(1.0)));
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<RedisLatency, String> {
        serde_json::from_str(text)
            .map(|benchmarks| RedisLatency { benchmarks })
            .map_err(|err| format!("not the redis bench's latency JSON: {err}"))
    }

    /// The entry of benchmark `id`.
    pub fn get(&self, id: &str) -> Option<&Attempts> {
        self.benchmarks.get(id)
    }

    /// Whether no benchmark was recorded.
    pub fn is_empty(&self) -> bool {
        self.benchmarks.is_empty()
    }
}
