//! Per-key limits on one grid: "One `RateLimiter` instance is one shared budget", one budget per
//! key, every key's windows aligned to the one origin; a key may have a limit of its own in
//! place of the limiter's (`docs/rules.md`: Limits per key).

use std::collections::BTreeMap;

use crate::count::{Count, Decision};
use crate::rules::Rules;

/// One [`Count`] per key, all on one [`Rules`]'s grid; a key never seen has a new count.
///
/// Kept in a `BTreeMap` so that iteration, and so every report built from it, is
/// deterministic.
///
/// # Examples
///
/// Keys do not share permits.
///
/// ```
/// use fixed_window_spec::{Decision, Keyed, Rules};
///
/// let rules = Rules::new(0, 1, 10, 0).expect("a valid configuration");
/// let mut keyed = Keyed::new(rules);
/// assert!(matches!(keyed.attempt(&"a", 1, 1), Decision::Permit { .. }));
/// assert!(matches!(keyed.attempt(&"b", 1, 1), Decision::Permit { .. }));
/// assert!(matches!(keyed.attempt(&"a", 2, 2), Decision::Reject { .. }));
/// ```
#[derive(Debug, Clone)]
pub struct Keyed<K> {
    rules: Rules,
    counts: BTreeMap<K, Count>,
    /// The limits keys have of their own, in place of `rules.limit`.
    own: BTreeMap<K, u32>,
}

impl<K: Ord + Clone> Keyed<K> {
    /// No key has taken a permit yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let keyed: Keyed<u8> = Keyed::new(Rules::new(0, 1, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.live(0), 0);
    /// ```
    pub fn new(rules: Rules) -> Keyed<K> {
        Keyed {
            rules,
            counts: BTreeMap::new(),
            own: BTreeMap::new(),
        }
    }

    /// The rules every key follows.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let rules = Rules::new(0, 1, 10, 0).expect("a valid configuration");
    /// assert_eq!(Keyed::<u8>::new(rules).rules(), &rules);
    /// ```
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Puts `limit` in force at once ([`Rules::with_limit`]) for every key without a limit of
    /// its own: each key's count is kept. Whether it was taken (`false` for 0, which leaves the rules as they were).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// assert!(matches!(keyed.attempt(&"a", 1, 1), Decision::Permit { remaining: 1, .. }));
    /// assert!(keyed.set_limit(1));
    /// assert!(matches!(keyed.attempt(&"a", 2, 2), Decision::Reject { .. }));
    /// assert!(matches!(keyed.attempt(&"b", 2, 2), Decision::Permit { remaining: 0, .. }));
    /// assert!(!keyed.set_limit(0));
    /// assert_eq!(keyed.rules().limit, 1);
    /// ```
    pub fn set_limit(&mut self, limit: u32) -> bool {
        match self.rules.with_limit(limit) {
            Some(rules) => {
                self.rules = rules;
                true
            }
            None => false,
        }
    }

    /// Gives `key` the limit `limit` in place of the limiter's, at once and for its current
    /// window too: its count is kept and counts against the new limit. Whether it was taken
    /// (`false` for 0, which leaves the key's limit as it was).
    ///
    /// # Examples
    ///
    /// A key that took one permit of two, lowered to one, is full at once; the default
    /// changed later does not change it.
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// assert!(matches!(keyed.attempt(&"a", 1, 1), Decision::Permit { remaining: 1, .. }));
    /// assert!(keyed.set_key_limit(&"a", 1));
    /// assert!(matches!(keyed.attempt(&"a", 2, 2), Decision::Reject { .. }));
    /// assert!(keyed.set_limit(5));
    /// assert_eq!((keyed.limit_of(&"a"), keyed.limit_of(&"b")), (1, 5));
    /// assert!(!keyed.set_key_limit(&"a", 0));
    /// ```
    pub fn set_key_limit(&mut self, key: &K, limit: u32) -> bool {
        if limit == 0 {
            return false;
        }
        self.own.insert(key.clone(), limit);
        true
    }

    /// Takes `key`'s own limit away: the limiter's applies to it from now, for its current
    /// window too. The limit it had, if it had one.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// keyed.set_key_limit(&7, 9);
    /// assert_eq!(keyed.clear_key_limit(&7), Some(9));
    /// assert_eq!(keyed.limit_of(&7), 2);
    /// ```
    pub fn clear_key_limit(&mut self, key: &K) -> Option<u32> {
        self.own.remove(key)
    }

    /// The limit in force for `key`: its own, or the limiter's.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let keyed: Keyed<u8> = Keyed::new(Rules::new(0, 3, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.limit_of(&1), 3);
    /// ```
    pub fn limit_of(&self, key: &K) -> u32 {
        self.own.get(key).copied().unwrap_or(self.rules.limit)
    }

    /// The rules `key` is decided by: the limiter's, with the key's own limit if it has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 3, 10, 0).expect("a valid configuration"));
    /// keyed.set_key_limit(&1, 8);
    /// assert_eq!(keyed.rules_of(&1).limit, 8);
    /// assert_eq!(keyed.rules_of(&2), *keyed.rules());
    /// ```
    pub fn rules_of(&self, key: &K) -> Rules {
        self.own
            .get(key)
            .and_then(|&limit| self.rules.with_limit(limit))
            .unwrap_or(self.rules)
    }

    /// The count of `key` (a new one if it never took a permit).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Keyed, Rules};
    ///
    /// let keyed: Keyed<u8> = Keyed::new(Rules::new(0, 1, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.count(&7), Count::new());
    /// ```
    pub fn count(&self, key: &K) -> Count {
        self.counts.get(key).copied().unwrap_or_default()
    }

    /// What an attempt on `key` at `now` with `deadline` decides, without recording it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Keyed, Rules};
    ///
    /// let keyed: Keyed<u8> = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.decide(&1, 3, 3), Decision::Permit { index: 0, remaining: 1 });
    /// ```
    pub fn decide(&self, key: &K, now: u128, deadline: u128) -> Decision {
        self.rules_of(key).decide(&self.count(key), now, deadline)
    }

    /// Records `decision` for `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// keyed.apply(&1, Decision::Permit { index: 0, remaining: 1 });
    /// assert_eq!(keyed.count(&1).used(), 1);
    /// ```
    pub fn apply(&mut self, key: &K, decision: Decision) {
        if matches!(decision, Decision::Permit { .. }) {
            self.counts.entry(key.clone()).or_default().apply(decision);
        }
    }

    /// [`Keyed::decide`] then [`Keyed::apply`]: one attempt that takes effect.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 1, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.attempt(&1, 3, 3), Decision::Permit { index: 0, remaining: 0 });
    /// assert_eq!(keyed.attempt(&1, 4, 4), Decision::Reject { retry_after: 6 });
    /// ```
    pub fn attempt(&mut self, key: &K, now: u128, deadline: u128) -> Decision {
        let decision = self.decide(key, now, deadline);
        self.apply(key, decision);
        decision
    }

    /// The keys a keyed limiter may hold at `now` at most, before any constant its storage adds:
    /// those that took a permit in the window in effect at `now` or in the one before it. A key
    /// whose stored window ended earlier holds nothing worth keeping.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Rules};
    ///
    /// let mut keyed = Keyed::new(Rules::new(0, 1, 10, 0).expect("a valid configuration"));
    /// keyed.attempt(&1, 3, 3);
    /// keyed.attempt(&2, 13, 13);
    /// assert_eq!(keyed.live(15), 2);
    /// assert_eq!(keyed.live(25), 1);
    /// assert_eq!(keyed.live(35), 0);
    /// ```
    pub fn live(&self, now: u128) -> usize {
        let current = self.rules.grid.index_of(now);
        self.counts
            .values()
            .filter(|count| count.index().saturating_add(1) >= current)
            .count()
    }
}
