//! How many times the oracle judged something against each rule: the denominator of a
//! sweep's violations, and a figure that adds up exactly over the shards of a sweep.

use std::collections::BTreeMap;

use super::Invariant;

/// Invariants there are: the length of [`Checks`]' table, indexed by discriminant.
const RULES: usize = Invariant::Memory as usize + 1;

/// Checks per rule: one for each time the oracle looked at a record (or at a call's end, or
/// at a run's end) and judged it against the rule, whether or not it found it broken.
///
/// Counting is an add into a fixed table, a handful per trace record: nothing a sweep can
/// measure beside running the scenario.
///
/// # Examples
///
/// Checks add up rule by rule.
///
/// ```
/// use fixed_window_sim::{Checks, Invariant};
///
/// let mut total = Checks::default();
/// let mut one = Checks::default();
/// one.count(&[Invariant::WindowLimit, Invariant::Events]);
/// total.add(&one);
/// total.add(&one);
/// assert_eq!(total.of(Invariant::WindowLimit), 2);
/// assert_eq!(total.named(&[Invariant::Events])["events"], 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks([u64; RULES]);

impl Default for Checks {
    fn default() -> Checks {
        Checks([0; RULES])
    }
}

impl Checks {
    /// Counts one check of each of `rules`.
    pub fn count(&mut self, rules: &[Invariant]) {
        self.count_times(rules, 1);
    }

    /// Counts `times` checks of each of `rules`.
    pub(crate) fn count_times(&mut self, rules: &[Invariant], times: u64) {
        for &rule in rules {
            self.0[rule as usize] += times;
        }
    }

    /// The checks of `rule`.
    pub fn of(&self, rule: Invariant) -> u64 {
        self.0[rule as usize]
    }

    /// Adds `other`'s checks to these.
    pub fn add(&mut self, other: &Checks) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// The checks of `rules` by name, every one listed, zero or not: a summary's `checks`.
    pub fn named(&self, rules: &[Invariant]) -> BTreeMap<&'static str, u64> {
        rules
            .iter()
            .map(|&rule| (rule.name(), self.of(rule)))
            .collect()
    }
}
