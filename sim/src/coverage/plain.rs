//! The features of a plain or keyed scenario's run: its clock kind and `max_wait`, drawn with
//! the scenario, and what its trace shows of windows, boundaries and waits.

use core::time::Duration;

use fixed_window::Origin;
use fixed_window_spec::END_OF_TIME;

use crate::clock_model::ClockKind;
use crate::record::{CallKind, Outcome, Record};
use crate::scenario::Scenario;
use crate::simulation::Run;

/// The features a plain or keyed sweep counts, in the order of [`plain_features`]' bits.
pub const PLAIN_FEATURES: [&str; 22] = [
    "clock_ordinary",
    "clock_near_max",
    "clock_centuries",
    "clock_jumps_forward",
    "clock_steps_backward",
    "clock_stands_still",
    "max_wait_duration_max",
    "reading_on_boundary",
    "window_filled",
    "window_over_65535_permits",
    "woken_into_next_window",
    "weighted_attempt",
    "too_many",
    "drain",
    "origin_at",
    "zero_weight",
    "origin_unix_epoch",
    "limit_lowered",
    "limit_raised",
    "limit_refused",
    "too_many_after_lowering",
    "coarse_clock",
];

const MAX_WAIT_MAX: u32 = 1 << 6;
const ON_BOUNDARY: u32 = 1 << 7;
const FILLED: u32 = 1 << 8;
const OVER_U16: u32 = 1 << 9;
const WOKEN: u32 = 1 << 10;
const WEIGHTED: u32 = 1 << 11;
const TOO_MANY: u32 = 1 << 12;
const DRAIN: u32 = 1 << 13;
const ORIGIN_AT: u32 = 1 << 14;
const ZERO_WEIGHT: u32 = 1 << 15;
const ORIGIN_UNIX_EPOCH: u32 = 1 << 16;
const LIMIT_LOWERED: u32 = 1 << 17;
const LIMIT_RAISED: u32 = 1 << 18;
const LIMIT_REFUSED: u32 = 1 << 19;
const TOO_MANY_AFTER_LOWERING: u32 = 1 << 20;
const COARSE_CLOCK: u32 = 1 << 21;

/// The features `run` of `scenario` exercised, as a mask over [`PLAIN_FEATURES`]: bit `i` for
/// `PLAIN_FEATURES[i]`.
///
/// - `clock_*`: the scenario's clock kind; `max_wait_duration_max`: its `max_wait` is
///   `Duration::MAX`; `coarse_clock`: its clock ticks coarser than a nanosecond.
/// - `reading_on_boundary`: a call started, or was permitted or rejected, at a reading that is
///   exactly the first instant of a window.
/// - `window_filled`: a permit left its window none (`remaining` 0).
/// - `window_over_65535_permits`: a permit was its window's 65,536th or later.
/// - `woken_into_next_window`: a call that slept was then permitted in a later window than the
///   one it began its sleep in.
/// - `limit_lowered`, `limit_raised`, `limit_refused`: a `set_limit` took a lower or a higher
///   limit, or was refused (zero, or past the ceiling).
/// - `too_many_after_lowering`: a call whose weight the limit held when it began ended
///   refused as too many (a lowering passed it while it waited).
///
/// One pass over the trace, with `u128` window arithmetic done only on sleeps and the permits
/// that follow them, and boundaries looked for in `u64` until one is found: a sweep runs as
/// fast with the count as without.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{PLAIN_FEATURES, Scenario, ScenarioId, Target, plain_features, run};
///
/// let scenario = Scenario::generate(&ScenarioId::seed(5));
/// let mask = plain_features(&scenario, &run(&scenario, Target::Real)?);
/// // Exactly one clock kind.
/// assert_eq!((mask & 0b11_1111).count_ones(), 1);
/// assert!(mask < 1 << PLAIN_FEATURES.len());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub fn plain_features(scenario: &Scenario, run: &Run) -> u32 {
    let config = &scenario.config;
    let mut mask = drawn_features(scenario);
    let Some(grid) = scenario.grid() else {
        return mask;
    };
    // A boundary of the grid within the timeline: window 0's start, or its end if it began
    // before the timeline (a grid with none has no boundary to see).
    let first = if grid.on_boundary(grid.start(0)) {
        grid.start(0)
    } else {
        grid.end(0).unwrap_or(END_OF_TIME)
    };
    let boundary = Boundary::new(u64::try_from(first).unwrap_or(u64::MAX), config.period);
    // The window each caller began its last sleep in, while its call lasts.
    let mut slept: Vec<Option<u128>> = vec![None; scenario.callers.len()];
    // The limit in force, and whether each caller's weight fitted it when its call began.
    let mut limit = config.limit;
    let mut fitted = vec![false; scenario.callers.len()];
    for record in &run.records {
        match *record {
            Record::Start {
                caller,
                at,
                kind,
                weight,
                ..
            } => {
                if mask & ON_BOUNDARY == 0 && boundary.on(at) {
                    mask |= ON_BOUNDARY;
                }
                if let Some(fits) = fitted.get_mut(caller as usize) {
                    *fits = weight <= limit;
                }
                mask |= match (kind, weight) {
                    (CallKind::Drain, _) => DRAIN,
                    (_, 0) => ZERO_WEIGHT,
                    (_, weight) if weight == 1 || weight > limit => 0,
                    _ => WEIGHTED,
                };
                if let Some(window) = slept.get_mut(caller as usize) {
                    *window = None;
                }
            }
            Record::Sleep { caller, at, .. } => {
                if let Some(window) = slept.get_mut(caller as usize) {
                    *window = Some(grid.index_of(u128::from(at)));
                }
            }
            Record::Permitted {
                caller,
                at,
                remaining,
            } => {
                if mask & ON_BOUNDARY == 0 && boundary.on(at) {
                    mask |= ON_BOUNDARY;
                }
                if remaining == 0 {
                    mask |= FILLED;
                }
                // The window has granted `limit - remaining` permits, whatever the calls' weights.
                if limit - remaining.min(limit) > u32::from(u16::MAX) {
                    mask |= OVER_U16;
                }
                let before =
                    caller.and_then(|caller| slept.get(caller as usize).copied().flatten());
                if before.is_some_and(|window| grid.index_of(u128::from(at)) > window) {
                    mask |= WOKEN;
                }
            }
            Record::Rejected { at, .. } if mask & ON_BOUNDARY == 0 && boundary.on(at) => {
                mask |= ON_BOUNDARY;
            }
            Record::Finish {
                caller,
                outcome: Outcome::TooMany { .. },
                ..
            } => {
                mask |= TOO_MANY;
                if fitted.get(caller as usize).copied().unwrap_or(false) {
                    mask |= TOO_MANY_AFTER_LOWERING;
                }
            }
            Record::LimitSet {
                limit: to,
                accepted,
                ..
            } => {
                mask |= limit_change(limit, to, accepted);
                if accepted {
                    limit = to;
                }
            }
            _ => {}
        }
    }
    mask
}

/// The features drawn with the scenario, before it runs: its clock kind, `max_wait` and
/// origin.
fn drawn_features(scenario: &Scenario) -> u32 {
    let mut mask = match scenario.clock.kind() {
        ClockKind::Ordinary => 1 << 0,
        ClockKind::NearMax => 1 << 1,
        ClockKind::Centuries => 1 << 2,
        ClockKind::JumpsForward => 1 << 3,
        ClockKind::StepsBackward => 1 << 4,
        ClockKind::StandsStill => 1 << 5,
    };
    if scenario.config.max_wait == Duration::MAX {
        mask |= MAX_WAIT_MAX;
    }
    if scenario.clock.tick() > 1 {
        mask |= COARSE_CLOCK;
    }
    match scenario.origin_choice {
        Origin::At(_) => mask |= ORIGIN_AT,
        Origin::UnixEpoch => mask |= ORIGIN_UNIX_EPOCH,
        _ => {}
    }
    mask
}

/// The feature a `set_limit(to)` under the limit `from` shows.
fn limit_change(from: u32, to: u32, accepted: bool) -> u32 {
    match (accepted, to.cmp(&from)) {
        (false, _) => LIMIT_REFUSED,
        (true, core::cmp::Ordering::Less) => LIMIT_LOWERED,
        (true, core::cmp::Ordering::Greater) => LIMIT_RAISED,
        (true, core::cmp::Ordering::Equal) => 0,
    }
}

/// Whether a reading is the first instant of a window, in `u64` arithmetic: `u128`'s division
/// is a library call, and a sweep asks this of most records.
#[derive(Debug, Clone, Copy)]
struct Boundary {
    origin: u64,
    /// The period, or `None` if it is longer than every reading after the origin, so that the
    /// origin is the only boundary.
    period: Option<u64>,
}

impl Boundary {
    fn new(origin: u64, period: Duration) -> Boundary {
        Boundary {
            origin,
            period: u64::try_from(period.as_nanos())
                .ok()
                .filter(|&period| period > 0),
        }
    }

    /// Agrees with `fixed_window_spec::Grid::on_boundary` on every `u64` reading.
    fn on(self, at: u64) -> bool {
        at.checked_sub(self.origin)
            .is_some_and(|since| self.period.map_or(since == 0, |period| since % period == 0))
    }
}

#[cfg(test)]
mod tests {
    use fixed_window_spec::Grid;

    use super::*;

    #[test]
    fn boundaries_in_u64_agree_with_the_specification() {
        let readings = [0, 1, 5, 9, 10, 15, 25, 26, u64::MAX - 1, u64::MAX];
        for origin in [0, 5, u64::MAX - 3, u64::MAX] {
            for period in [1, 2, 10, u64::MAX - 1, u64::MAX] {
                let grid = Grid::checked(u128::from(origin), u128::from(period)).unwrap();
                let boundary = Boundary::new(origin, Duration::from_nanos(period));
                for at in readings {
                    assert_eq!(
                        boundary.on(at),
                        grid.on_boundary(u128::from(at)),
                        "{origin} {period} {at}"
                    );
                }
            }
            let grid = Grid::checked(u128::from(origin), Duration::MAX.as_nanos()).unwrap();
            let boundary = Boundary::new(origin, Duration::MAX);
            for at in readings {
                assert_eq!(
                    boundary.on(at),
                    grid.on_boundary(u128::from(at)),
                    "{origin} MAX {at}"
                );
            }
        }
    }
}
