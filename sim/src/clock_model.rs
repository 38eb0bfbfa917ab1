//! What a simulated clock reads at each instant of virtual time.
//!
//! Virtual time orders the simulator's events; the clock's reading is what the limiter sees.
//! Keeping them apart lets the reading jump, step back or stand still while events stay in
//! order.

use serde::{Deserialize, Serialize};

/// The shape of a clock's readings over virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// Reads `start + t`.
    Ordinary,
    /// Starts a few periods (and a fraction) before [`Instant::MAX`](fixed_window::Instant::MAX)
    /// and saturates there.
    NearMax,
    /// One-nanosecond periods with arrivals spread over centuries.
    Centuries,
    /// Moves as time does, with huge forward jumps.
    JumpsForward,
    /// Moves as time does, with steps backwards.
    StepsBackward,
    /// Stands still for stretches (or for good).
    StandsStill,
}

/// One stretch of readings: from virtual time `from`, the clock reads `base` plus the time
/// since `from` (or `base` alone while frozen), saturating at `u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Segment {
    /// Virtual time at which this stretch begins.
    pub from: u64,
    /// The reading at `from`.
    pub base: u64,
    /// Whether the reading stays at `base` for the whole stretch.
    pub frozen: bool,
}

/// A clock's readings as a function of virtual time: stretches in increasing order of `from`,
/// the first starting at 0.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClockModel {
    kind: ClockKind,
    segments: Vec<Segment>,
    /// The clock's resolution in nanoseconds: every reading is rounded down to a multiple of
    /// it (1 reads exact nanoseconds).
    tick: u64,
}

impl ClockModel {
    /// A model of `kind` made of `segments`; the first should start at virtual time 0 (an
    /// empty list reads 0 throughout).
    ///
    /// # Examples
    ///
    /// A clock that starts at 100 and steps back by 50 at virtual time 10.
    ///
    /// ```
    /// use fixed_window_sim::{ClockKind, ClockModel, Segment};
    ///
    /// let model = ClockModel::new(ClockKind::StepsBackward, vec![
    ///     Segment { from: 0, base: 100, frozen: false },
    ///     Segment { from: 10, base: 60, frozen: false },
    /// ]);
    /// assert_eq!((model.reading(9), model.reading(10), model.reading(12)), (109, 60, 62));
    /// ```
    pub fn new(kind: ClockKind, mut segments: Vec<Segment>) -> ClockModel {
        segments.sort_by_key(|segment| segment.from);
        ClockModel {
            kind,
            segments,
            tick: 1,
        }
    }

    /// An ordinary clock reading `start + t`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ClockModel;
    ///
    /// assert_eq!(ClockModel::ordinary(5).reading(7), 12);
    /// ```
    pub fn ordinary(start: u64) -> ClockModel {
        ClockModel::new(
            ClockKind::Ordinary,
            vec![Segment {
                from: 0,
                base: start,
                frozen: false,
            }],
        )
    }

    /// This model with every reading `by` earlier (none below zero): the same clock in a
    /// process whose timeline started `by` later.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ClockModel;
    ///
    /// assert_eq!(ClockModel::ordinary(42).younger(42).reading(7), 7);
    /// ```
    #[must_use]
    pub fn younger(&self, by: u64) -> ClockModel {
        let segments = self
            .segments
            .iter()
            .map(|segment| Segment {
                base: segment.base.saturating_sub(by),
                ..*segment
            })
            .collect();
        ClockModel::new(self.kind, segments).with_tick(self.tick)
    }

    /// This model read through a clock that ticks every `tick` nanoseconds: each reading is
    /// rounded down to a multiple of `tick`, so it never runs ahead of the exact one and,
    /// within a stretch, never goes back. A `tick` of 0 or 1 reads exact nanoseconds.
    ///
    /// # Examples
    ///
    /// A clock with a 1 ms tick.
    ///
    /// ```
    /// use fixed_window_sim::ClockModel;
    ///
    /// let model = ClockModel::ordinary(5).with_tick(1_000_000);
    /// assert_eq!(model.reading(999_994), 0);
    /// assert_eq!(model.reading(999_995), 1_000_000);
    /// assert_eq!(model.reading(2_500_000), 2_000_000);
    /// assert_eq!(model.tick(), 1_000_000);
    /// ```
    #[must_use]
    pub fn with_tick(mut self, tick: u64) -> ClockModel {
        self.tick = tick.max(1);
        self
    }

    /// The clock's resolution in nanoseconds (1: exact).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Which kind of clock this is.
    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    /// The stretches of readings.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The reading at virtual time `t`: the exact reading rounded down to the clock's
    /// [`tick`](ClockModel::tick).
    #[inline]
    pub fn reading(&self, t: u64) -> u64 {
        // Few stretches, and most calls fall in the last one.
        let exact = match self.segments.iter().rev().find(|segment| segment.from <= t) {
            Some(segment) if segment.frozen => segment.base,
            Some(segment) => segment.base.saturating_add(t - segment.from),
            None => 0,
        };
        crate::resolution::round_down(exact, self.tick)
    }
}
