//! The keyed limiters' memory, as the `keyed_memory` example counts it with a counting
//! allocator: bytes per live key, and bytes held after many distinct keys have passed.

use serde::Deserialize;

/// Bytes one limiter held with `keys` keys called once in one window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LiveKeys {
    /// `ours`, `governor` or `mutex`.
    pub limiter: String,
    /// Keys called.
    pub keys: u64,
    /// Net bytes allocated, the limiter alive.
    pub bytes: i64,
    /// Keys the limiter held (its `len()`).
    pub held: u64,
}

/// Bytes one limiter held after the churn.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Held {
    /// `ours`, `ours-live-window` (ours holding one window's keys only), `governor`,
    /// `governor-retain-recent` or `mutex`.
    pub limiter: String,
    /// Net bytes allocated, the limiter alive.
    pub bytes: i64,
    /// Keys the limiter held (its `len()`).
    pub held: u64,
}

/// Many distinct keys through one limiter, `per_window` fresh keys in each window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Churn {
    /// Distinct keys in all.
    pub keys: u64,
    /// Fresh keys per window.
    pub per_window: u64,
    /// Windows.
    pub windows: u64,
    /// Each limiter's bytes at the end.
    pub results: Vec<Held>,
}

/// The `keyed_memory` example's `keyed-memory.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct KeyedMemory {
    /// Permits per key per window.
    pub limit: u32,
    /// The window, in nanoseconds.
    pub period_ns: u64,
    /// Bytes per live key, for each limiter and population.
    pub per_live_key: Vec<LiveKeys>,
    /// Bytes after the churn.
    pub churn: Churn,
}

/// Ours holding one window's keys only: the bound the churn is compared with.
pub const LIVE_WINDOW: &str = "ours-live-window";

impl KeyedMemory {
    /// Parses the JSON the `keyed_memory` example writes.
    ///
    /// # Errors
    ///
    /// If the text is not that JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::KeyedMemory;
    ///
    /// let memory = KeyedMemory::parse(
    ///     r#"{"limit": 10, "period_ns": 1000000000, "per_live_key": [],
    ///         "churn": {"keys": 10000000, "per_window": 1000, "windows": 10000, "results": [
    ///             {"limiter": "ours-live-window", "bytes": 88464, "held": 1000},
    ///             {"limiter": "ours", "bytes": 105760, "held": 1000}]}}"#,
    /// )?;
    /// assert_eq!(memory.after_churn_over_live_window(), Some((105_760.0, 88_464.0)));
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<KeyedMemory, String> {
        serde_json::from_str(text)
            .map_err(|err| format!("not the keyed_memory example's JSON: {err}"))
    }

    /// The bytes `limiter` held after the churn.
    pub fn after_churn(&self, limiter: &str) -> Option<&Held> {
        self.churn.results.iter().find(|h| h.limiter == limiter)
    }

    /// (bytes ours held after the churn, bytes ours holds with one window's keys only).
    pub fn after_churn_over_live_window(&self) -> Option<(f64, f64)> {
        // Byte counts far below 2^52: exact in f64.
        #[allow(clippy::cast_precision_loss)]
        let bytes = |limiter| self.after_churn(limiter).map(|h| h.bytes as f64);
        Some((bytes("ours")?, bytes(LIVE_WINDOW)?))
    }
}
