//! Coverage: how many scenarios of a sweep exercised each feature the simulator promises to
//! reach (a clock kind, a reading on a window boundary, a window of more than 65,535 permits,
//! a fault kind, …), so that a sweep can show, and a gate can require, that it reached them.
//!
//! Each scenario counts each feature it exercised once, whatever the number of calls that did:
//! the counts are scenarios, and add up over the shards of a sweep like its other counts.

use std::collections::BTreeMap;

mod plain;

pub use self::plain::{PLAIN_FEATURES, plain_features};

/// Scenarios that exercised each feature, by name.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::Coverage;
///
/// let mut total = Coverage::new(&["flood", "boundary"]);
/// let mut one = Coverage::default();
/// one.hit("boundary");
/// total.add(&one);
/// assert_eq!(total.counts()["boundary"], 1);
/// assert_eq!(total.missing(), ["flood"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage(BTreeMap<&'static str, u64>);

impl Coverage {
    /// No scenario yet, with every one of `features` listed at zero, so that a summary names
    /// the features no scenario reached.
    pub fn new(features: &[&'static str]) -> Coverage {
        Coverage(features.iter().map(|&feature| (feature, 0)).collect())
    }

    /// Counts one more scenario that exercised `feature`.
    pub fn hit(&mut self, feature: &'static str) {
        *self.0.entry(feature).or_insert(0) += 1;
    }

    /// Counts one more scenario for each feature whose bit is set in `mask`, bit `i` standing
    /// for `features[i]`.
    pub fn hit_mask(&mut self, features: &[&'static str], mask: u64) {
        for (i, &feature) in features.iter().enumerate() {
            if mask & (1 << i) != 0 {
                self.hit(feature);
            }
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Coverage) {
        for (&feature, &count) in &other.0 {
            *self.0.entry(feature).or_insert(0) += count;
        }
    }

    /// The counts, by feature name: a summary's `coverage`.
    pub fn counts(&self) -> &BTreeMap<&'static str, u64> {
        &self.0
    }

    /// The features listed that no scenario exercised, in name order.
    pub fn missing(&self) -> Vec<&'static str> {
        self.0
            .iter()
            .filter(|&(_, &count)| count == 0)
            .map(|(&feature, _)| feature)
            .collect()
    }
}

/// The line a sweep (or a merge) prints when `--require-coverage` finds features no scenario
/// reached; `None` if every one was.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::coverage_failure;
///
/// assert_eq!(coverage_failure::<&str>(&[]), None);
/// assert_eq!(
///     coverage_failure(&["clock_near_max", "window_filled"]).as_deref(),
///     Some("FAIL coverage: no scenario reached clock_near_max, window_filled"),
/// );
/// ```
pub fn coverage_failure<S: AsRef<str>>(missing: &[S]) -> Option<String> {
    (!missing.is_empty()).then(|| {
        let names: Vec<&str> = missing.iter().map(AsRef::as_ref).collect();
        format!("FAIL coverage: no scenario reached {}", names.join(", "))
    })
}
