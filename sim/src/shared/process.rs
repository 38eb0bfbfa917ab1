//! One client process of a shared scenario: its clock, its connection and its limiter's
//! configuration, and how a scenario draws them.

use core::time::Duration;

use fixed_window_redis::{FailPolicy, Lease};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Scenarios have at most this many processes (the issue's range is 1 to 16).
pub(crate) const MOST_PROCESSES: u16 = 16;

/// A drawn timeout exceeds the least round trip, as the process's clock measures it, by at
/// least this much, unless the link is drawn slower than the timeout.
const TIMEOUT_MARGIN_NS: u64 = 1_000;

/// A process's clock: virtual time shifted by `offset_ns` and running `ppm` parts per
/// million fast (slow if negative), read through a resolution of `tick` nanoseconds.
///
/// The limiter's own readings (its `Clock`'s `now`, what its sleeps wait for) are rounded
/// down to the tick ([`reading`](ProcessClock::reading)); the timers the limiter runs apart
/// from its `Clock` (a round trip's timeout, the back-off before a new connection, redis-rs's
/// waits) measure time as the hardware does, at the clock's rate but to the nanosecond
/// ([`exact`](ProcessClock::exact)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessClock {
    /// The reading at virtual time zero.
    pub offset_ns: u64,
    /// The rate error, in parts per million (|ppm| < 1,000: the documented allowance).
    pub ppm: i32,
    /// The resolution, in nanoseconds: every reading is a multiple of it (1 reads exact
    /// nanoseconds).
    pub tick: u64,
}

impl ProcessClock {
    /// The limiter's reading at virtual time `t`: the exact one rounded down to the tick.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::ProcessClock;
    ///
    /// let coarse = ProcessClock { offset_ns: 0, ppm: 0, tick: 1_000_000 };
    /// assert_eq!(coarse.reading(2_999_999), 2_000_000);
    /// assert_eq!(coarse.exact(2_999_999), 2_999_999);
    /// ```
    pub fn reading(&self, t: u64) -> u64 {
        crate::resolution::round_down(self.exact(t), self.tick)
    }

    /// The resolution its limiter is configured with
    /// ([`Config::with_clock_resolution`](fixed_window_redis::Config::with_clock_resolution)):
    /// its tick, or zero if it reads exact nanoseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_sim::shared::ProcessClock;
    ///
    /// assert_eq!(ProcessClock { offset_ns: 0, ppm: 0, tick: 1 }.resolution(), Duration::ZERO);
    /// let coarse = ProcessClock { offset_ns: 0, ppm: 0, tick: 1_000 };
    /// assert_eq!(coarse.resolution(), Duration::from_micros(1));
    /// ```
    pub fn resolution(&self) -> Duration {
        match self.tick {
            0 | 1 => Duration::ZERO,
            tick => Duration::from_nanos(tick),
        }
    }

    /// The exact reading at virtual time `t`: the hardware's time at the clock's rate, before
    /// the tick rounds it.
    pub fn exact(&self, t: u64) -> u64 {
        let drift = i128::from(t) * i128::from(self.ppm) / 1_000_000;
        let reading = i128::from(self.offset_ns) + i128::from(t) + drift;
        u64::try_from(reading.max(0)).unwrap_or(u64::MAX)
    }

    /// How far the clock moves over `span_ns` of virtual time (within a nanosecond: the
    /// reading's drift is rounded at each end).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::ProcessClock;
    ///
    /// let fast = ProcessClock { offset_ns: 0, ppm: 500, tick: 1 };
    /// assert_eq!(fast.measured(2_000_000), 2_001_000);
    /// assert_eq!(ProcessClock { offset_ns: 0, ppm: -500, tick: 1 }.measured(2_000_000), 1_999_000);
    /// ```
    pub fn measured(&self, span_ns: u64) -> u64 {
        let drift = i128::from(span_ns) * i128::from(self.ppm) / 1_000_000;
        u64::try_from((i128::from(span_ns) + drift).max(0)).unwrap_or(u64::MAX)
    }

    /// The first virtual time at or after `from` whose (rounded) reading is at least
    /// `target`: where a sleep until `target` ends, at the first tick at or after it.
    pub fn virtual_at(&self, target: u64, from: u64) -> u64 {
        self.exact_virtual_at(
            crate::resolution::first_reading_from(target, self.tick),
            from,
        )
    }

    /// The first virtual time at or after `from` whose exact reading is at least `target`:
    /// where a timer for `target` fires.
    pub fn exact_virtual_at(&self, target: u64, from: u64) -> u64 {
        if self.exact(from) >= target {
            return from;
        }
        let rate = 1_000_000 + i128::from(self.ppm);
        let estimate = (i128::from(target) - i128::from(self.offset_ns)) * 1_000_000 / rate;
        let mut t = u64::try_from(estimate.max(0))
            .unwrap_or(u64::MAX)
            .max(from)
            .saturating_sub(2);
        while self.exact(t) < target && t < u64::MAX {
            t += 1;
        }
        t.max(from)
    }
}

/// A process's connection: one-way delay and jitter, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// The least one-way delay.
    pub delay_ns: u64,
    /// Up to this much more, drawn per message (messages stay in order).
    pub jitter_ns: u64,
}

/// A process configured apart from the others, as a deployment rolled out with another limit
/// or period is: the server holds the first configuration stored, and refuses this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Misconfiguration {
    /// Its limit.
    Limit(u32),
    /// Its period, in microseconds.
    Period(u64),
}

/// One client process: its own limiter instance.
///
/// A process whose link is slower than its timeout ([`ProcessSpec::slow_link`]) can never
/// register: every round trip outlasts the timeout, so it answers each call by its fail
/// policy. Scenarios draw that on purpose, and otherwise keep every timeout at least a
/// microsecond above the least round trip, so that whether a link is slow is never a matter of
/// a nanosecond's rounding.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProcessSpec {
    /// Virtual time it starts (and registers) at.
    pub start: u64,
    /// Its clock.
    pub clock: ProcessClock,
    /// Its connection.
    pub link: Link,
    /// Its `max_wait`.
    pub max_wait: Duration,
    /// Its fail policy.
    pub fail_policy: FailPolicy,
    /// Its round-trip timeout.
    pub timeout: Duration,
    /// How many full windows it may remember.
    pub local_memory: usize,
    /// Its own limit or period instead of the shared ones, if it is configured apart.
    pub misconfigured: Option<Misconfiguration>,
    /// The shares of a window it leases, if it leases ([`Config::with_lease`](fixed_window_redis::Config::with_lease)).
    pub lease: Option<Lease>,
    /// Whether its limiter is made with `start` (registering in the background; a refusal
    /// answers every call `Conflict`) rather than `connect` (registering before it serves; a
    /// refusal leaves it serving nothing until a restart).
    pub started: bool,
}

impl ProcessSpec {
    /// Whether its link is slower than its timeout: the least round trip (twice the least
    /// one-way delay), as its own clock measures it, outlasts the timeout, so no reply ever
    /// comes in time.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ScenarioId;
    /// use fixed_window_sim::shared::SharedScenario;
    ///
    /// let mut process = SharedScenario::generate(&ScenarioId::seed(1)).processes[0].clone();
    /// assert!(!process.slow_link());
    /// process.timeout = core::time::Duration::from_nanos(process.link.delay_ns);
    /// assert!(process.slow_link());
    /// ```
    pub fn slow_link(&self) -> bool {
        let timeout = u64::try_from(self.timeout.as_nanos()).unwrap_or(u64::MAX);
        self.clock.measured(2 * self.link.delay_ns) > timeout
    }
}

/// Gives `process` a timeout shorter than its least round trip, as its clock measures it
/// (between a quarter of it and nine tenths), so that its link is slower than its timeout.
pub(crate) fn slow_down(rng: &mut ChaCha8Rng, process: &mut ProcessSpec) {
    let least = process.clock.measured(2 * process.link.delay_ns);
    let timeout_ns = rng.random_range(least / 4..=least - least / 10).max(1);
    process.timeout = Duration::from_nanos(timeout_ns);
}

/// `processes` with each one's clock resolution drawn, by the plain scenarios' rule, for
/// the period it is configured with (`period_us`, the shared one, unless it is configured
/// apart), from a generator of their own, so that every other draw of a seed stays as it was.
pub(crate) fn with_resolutions(
    seed: u64,
    period_us: u64,
    mut processes: Vec<ProcessSpec>,
) -> Vec<ProcessSpec> {
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ 0x71C4_C10C);
    for process in &mut processes {
        let period_us = match process.misconfigured {
            Some(Misconfiguration::Period(own)) => own,
            _ => period_us,
        };
        process.clock.tick = crate::resolution::pick(&mut rng, period_us.saturating_mul(1_000));
    }
    processes
}

/// `processes` with about a third of those drawn `Closed` failing by `Local { share }`
/// instead, the share a part of the limit (from 1 to all of it), drawn by a generator of its
/// own, so that every other draw of a seed stays as it was.
pub(crate) fn with_local_shares(
    seed: u64,
    limit: u32,
    mut processes: Vec<ProcessSpec>,
) -> Vec<ProcessSpec> {
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ 0x10CA_15AE);
    for process in &mut processes {
        if process.fail_policy == FailPolicy::Closed && rng.random_bool(1.0 / 3.0) {
            process.fail_policy = FailPolicy::Local {
                share: rng.random_range(1..=limit.max(1)),
            };
        }
    }
    processes
}

/// `processes` with some leasing shares of the window beside exact ones on the same keys: in
/// about half the scenarios, each process leases with probability one half (all of them in a
/// quarter of those), its largest share from 1 to past the limit and its divisor from 1 to 64,
/// drawn by a generator of their own so that every other draw of a seed stays as it was.
pub(crate) fn with_leases(
    seed: u64,
    limit: u32,
    mut processes: Vec<ProcessSpec>,
) -> Vec<ProcessSpec> {
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ 0x1EA5_ED5A);
    if !rng.random_bool(0.5) {
        return processes;
    }
    let all = rng.random_bool(0.25);
    for process in &mut processes {
        if !all && !rng.random_bool(0.5) {
            continue;
        }
        let max_share = match rng.random_range(0..100) {
            0..15 => 1,
            15..60 => rng.random_range(2..=16),
            60..90 => rng.random_range(2..=limit.max(2)),
            _ => rng.random_range(1..=limit.saturating_mul(2).max(1)),
        };
        let divisor = match rng.random_range(0..100) {
            0..20 => 1,
            20..60 => fixed_window_redis::DEFAULT_LEASE_DIVISOR,
            _ => rng.random_range(1..=64),
        };
        let keys = if rng.random_bool(0.1) {
            rng.random_range(0..=2)
        } else {
            fixed_window_redis::DEFAULT_LEASED_KEYS
        };
        process.lease = Lease::new(max_share)
            .and_then(|lease| lease.with_divisor(divisor))
            .map(|lease| lease.with_keys(keys))
            .ok();
    }
    processes
}

pub(crate) fn pick_processes(rng: &mut ChaCha8Rng) -> Vec<ProcessSpec> {
    let count: u16 = match rng.random_range(0..100) {
        0..25 => 1,
        25..70 => rng.random_range(2..=4),
        _ => rng.random_range(5..=MOST_PROCESSES),
    };
    // One network for the scenario, each process's link a variation of it.
    let (delay, jitter) = match rng.random_range(0..100) {
        0..50 => (
            rng.random_range(1_000..=100_000),
            rng.random_range(0..=50_000),
        ),
        50..85 => (
            rng.random_range(100_000..=2_000_000),
            rng.random_range(0..=1_000_000),
        ),
        _ => (
            rng.random_range(2_000_000..=20_000_000),
            rng.random_range(0..=20_000_000),
        ),
    };
    let max_wait_scale = rng.random_range(0..=3);
    (0..count)
        .map(|_| {
            let link = Link {
                delay_ns: rng.random_range(delay / 2..=delay),
                jitter_ns: rng.random_range(0..=jitter),
            };
            let round_trip = 2 * (link.delay_ns + link.jitter_ns);
            let timeout_ns = match rng.random_range(0..100) {
                // Tight: the slower round trips time out, the faster ones do not.
                0..15 => {
                    rng.random_range(2 * link.delay_ns + link.jitter_ns / 2..=round_trip)
                        + TIMEOUT_MARGIN_NS
                }
                _ => rng
                    .random_range(round_trip * 2..=round_trip * 20)
                    .max(1_000),
            };
            let max_wait = match (max_wait_scale, rng.random_range(0..100)) {
                (0, _) | (_, 0..40) => Duration::ZERO,
                (scale, _) => Duration::from_nanos(rng.random_range(1..=round_trip * 10 * scale)),
            };
            let clock = ProcessClock {
                offset_ns: rng.random_range(0..=1_u64 << 45),
                ppm: if rng.random_bool(0.3) {
                    rng.random_range(-999..=999)
                } else {
                    0
                },
                // Drawn apart ([`with_resolutions`]), so that every other draw stays.
                tick: 1,
            };
            // The timeout runs on the process's clock: one running fast would shorten a tight
            // timeout below the least round trip, and the link would be slow by accident.
            let timeout_ns = timeout_ns.max(clock.measured(2 * link.delay_ns) + TIMEOUT_MARGIN_NS);
            ProcessSpec {
                start: rng.random_range(0..=round_trip * 4),
                clock,
                link,
                max_wait,
                fail_policy: if rng.random_bool(0.3) {
                    FailPolicy::Open
                } else {
                    FailPolicy::Closed
                },
                timeout: Duration::from_nanos(timeout_ns),
                local_memory: match rng.random_range(0..100) {
                    0..60 => fixed_window_redis::DEFAULT_LOCAL_MEMORY,
                    60..80 => 0,
                    _ => rng.random_range(1..=4),
                },
                misconfigured: None,
                lease: None,
                started: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn drawn_timeouts_stay_clear_of_the_least_round_trip() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut slowed = 0;
        for _ in 0..2_000 {
            for mut process in pick_processes(&mut rng) {
                let least = process.clock.measured(2 * process.link.delay_ns);
                let timeout = u64::try_from(process.timeout.as_nanos()).unwrap_or(u64::MAX);
                assert!(timeout >= least + TIMEOUT_MARGIN_NS, "{process:?}");
                assert!(!process.slow_link());
                if rng.random_bool(0.1) {
                    slow_down(&mut rng, &mut process);
                    let timeout = u64::try_from(process.timeout.as_nanos()).unwrap_or(u64::MAX);
                    assert!(timeout + least / 10 <= least, "{process:?}");
                    assert!(process.slow_link());
                    slowed += 1;
                }
            }
        }
        assert!(slowed > 100);
    }

    #[test]
    fn a_drifting_clock_maps_back_to_the_first_virtual_time_reaching_a_reading() {
        for ppm in [-999, -1, 0, 1, 999] {
            for tick in [1, 1_000, 15_625_000, 333_333] {
                let clock = ProcessClock {
                    offset_ns: 1_000,
                    ppm,
                    tick,
                };
                for target in [0, 1_000, 1_001, 5_000_000, 123_456_789_012] {
                    let t = clock.virtual_at(target, 0);
                    assert!(clock.reading(t) >= target, "{ppm} {tick} {target}");
                    assert!(
                        t == 0 || clock.reading(t - 1) < target,
                        "{ppm} {tick} {target}"
                    );
                    let fires = clock.exact_virtual_at(target, 0);
                    assert!(clock.exact(fires) >= target, "{ppm} {tick} {target}");
                    assert!(
                        fires == 0 || clock.exact(fires - 1) < target,
                        "{ppm} {tick} {target}"
                    );
                }
            }
        }
    }
}
