//! What the oracle saw of a keyed limiter's memory, in figures a sweep adds up over its
//! scenarios: a bound that holds in every run says little unless the runs also came near it,
//! so the oracle keeps how close they came beside the violations it reports.

/// What the oracle saw of a keyed limiter's memory: the keys it held after each event against
/// the bound then.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// Events after which the keys held were checked.
    pub checked: u64,
    /// The most keys held after any event.
    pub most_held: u64,
    /// The bound after that event (the first at which `most_held` was reached).
    pub bound_then: u64,
    /// The largest bound after any event.
    pub most_bound: u64,
    /// Events after which the keys held equalled the bound.
    pub at_bound: u64,
}

impl Memory {
    /// Adds `other`'s figures to these: the sums of checks, the largest figures.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::Memory;
    ///
    /// let mut total = Memory { checked: 2, most_held: 5, bound_then: 9, most_bound: 9, at_bound: 1 };
    /// total.add(&Memory { checked: 3, most_held: 7, bound_then: 7, most_bound: 8, at_bound: 2 });
    /// assert_eq!(total, Memory { checked: 5, most_held: 7, bound_then: 7, most_bound: 9, at_bound: 3 });
    /// ```
    pub fn add(&mut self, other: &Memory) {
        self.checked += other.checked;
        self.at_bound += other.at_bound;
        if other.most_held > self.most_held {
            self.most_held = other.most_held;
            self.bound_then = other.bound_then;
        }
        self.most_bound = self.most_bound.max(other.most_bound);
    }

    /// Takes in one check after an event: the limiter held `len` keys when its reclamation
    /// left at most `bound`. Whether `len` broke the bound is the oracle's to report; these
    /// figures only say how near the runs came to it.
    #[inline]
    pub(super) fn saw(&mut self, len: u64, bound: u64) {
        self.checked += 1;
        if len > self.most_held {
            self.most_held = len;
            self.bound_then = bound;
        }
        self.most_bound = self.most_bound.max(bound);
        self.at_bound += u64::from(len == bound);
    }
}
