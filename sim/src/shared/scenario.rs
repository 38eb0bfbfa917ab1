//! A shared-limiter scenario, drawn from one seed (swarm style): the limit and period every
//! process shares, the client processes (each with its own configuration, clock and
//! connection), the callers and their keys, and the faults.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use core::time::Duration;

use fixed_window_redis::{Config, MAX_ORIGIN_MICROS};

use crate::scenario::ScenarioId;
use crate::shared::cluster::{ClusterSpec, Drawn, pick_cluster};
use crate::shared::faults::{Fault, Faults, pick_credentials, pick_faults, refused_until};
use crate::shared::hand_backs::{HandBack, pick_hand_backs};
use crate::shared::key_limits::{KeyLimits, pick_key_limits};
use crate::shared::key_live::{KeyLimitChange, pick_key_live};
use crate::shared::limit_changes::{LimitChange, pick_limit_changes};
use crate::shared::process::{
    Misconfiguration, ProcessSpec, pick_processes, slow_down, with_leases, with_local_shares,
    with_resolutions,
};
use crate::shared::replication::{Replication, pick_replication};
use crate::shared::server::SERVER_EPOCH_NS;
use crate::shared::wide::{MAX_PERIOD_US, Wide};

/// The limiter's name in every process.
pub const SHARED_NAME: &str = "sim";

/// One caller: a call of `try_acquire` (never waits) or `acquire` (waits up to `max_wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SharedCaller {
    /// Virtual time of arrival.
    pub arrival: u64,
    /// Its process.
    pub process: u16,
    /// Its key, an index into [`SharedScenario::keys`].
    pub key: u16,
    /// Whether it calls `acquire` (and may wait). A drain never waits.
    pub waits: bool,
    /// The permits it takes.
    pub weight: Weight,
}

/// The permits a caller takes: one (`try_acquire`, `acquire`), `n` of one window at once
/// (`try_acquire_n`, `acquire_n`: all or none; above the limit, `TooMany` at once), or
/// whatever the window has left (`drain`: it is full afterwards, for every process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Weight {
    /// One permit.
    One,
    /// `n` permits.
    Units(u32),
    /// The rest of the window: a drain.
    Rest,
}

impl Weight {
    /// The weight as the limiter's methods take it: `n`, or `None` for a drain.
    pub fn permits(self) -> Option<u32> {
        match self {
            Weight::One => Some(1),
            Weight::Units(n) => Some(n),
            Weight::Rest => None,
        }
    }
}

/// How many keys callers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyMode {
    /// Every caller uses one key.
    Hot,
    /// A few keys, evenly.
    Few,
    /// Many keys, a few of them hot.
    Many,
}

/// A shared-limiter scenario.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SharedScenario {
    /// The id that reproduces it.
    pub id: ScenarioId,
    /// Permits per window, shared.
    pub limit: u32,
    /// The window's length in microseconds (the server's resolution), shared.
    pub period_us: u64,
    /// The client processes.
    pub processes: Vec<ProcessSpec>,
    /// The keys callers use.
    pub keys: Vec<String>,
    /// How they were drawn.
    pub key_mode: KeyMode,
    /// The callers, in order of arrival.
    pub callers: Vec<SharedCaller>,
    /// The faults.
    pub faults: Faults,
    /// Whether every process reads the server's time from a key (the script's `KEYS[3]`,
    /// which the simulated server keeps equal to its clock) instead of `TIME`.
    pub time_key: bool,
    /// A fixed origin every process is configured with (`Config::with_origin`), in
    /// microseconds on the server's clock: 0 is the Unix epoch (`Origin::UnixEpoch`), any
    /// other an instant (`Origin::At`). `None`: the first registration's.
    pub origin: Option<u64>,
    /// The changes of the shared limit its processes make (`set_limit`), in order of time.
    pub limit_changes: Vec<LimitChange>,
    /// The Redis Cluster the processes share instead of one server (`Protocol::for_cluster`),
    /// in one scenario in four: its primaries and the faults of its slots and primaries. Such
    /// a scenario makes no change of the limit: on a cluster each counter records the version
    /// it was counted under, which the oracle's model of one stored version does not follow.
    pub cluster: Option<ClusterSpec>,
    /// The replication its processes wait for (`Config::with_wait_for_replicas`), every
    /// process alike, in one scenario in five (drawn from a generator of its own): the delay
    /// of each primary's replica and its outages. `None`: no process waits, and a failover's
    /// replica lags by the writes its fault drew.
    pub replication: Option<Replication>,
    /// The hand-backs of unspent shares its leasing processes make (`hand_back`), in order
    /// of time.
    pub hand_backs: Vec<HandBack>,
    /// The limits of their own some keys have (`Config::key_limit`), every process alike but
    /// perhaps one, in some scenarios on one node that change no limit (drawn from a
    /// generator of their own).
    pub key_limits: KeyLimits,
    /// The live changes of keys' limits its processes make (`set_key_limit`,
    /// `clear_key_limit`), in order of time, in some scenarios on one node that the oracle's
    /// model follows (drawn from a generator of their own).
    pub key_live: Vec<KeyLimitChange>,
}

/// Scenarios have at most this many callers.
const MOST_CALLERS: usize = 400;

/// The share of scenarios with a process whose link is slower than its timeout.
const SLOW_LINK_SHARE: f64 = 0.03;

/// The share of scenarios whose callers take weights and drain.
const WEIGHTED_SHARE: f64 = 0.2;

/// The share of processes whose limiter is made with `start` rather than `connect`.
const STARTED_SHARE: f64 = 0.5;

/// The virtual time a scenario with a long period spreads its callers over, at most: 2^36 ns,
/// some 69 seconds, as long as the ordinary draws' longest (40 windows of 2 s).
const LONG_PERIOD_SPAN_NS: u64 = 1 << 36;

/// The share of scenarios whose processes are configured with a fixed origin.
const FIXED_ORIGIN_SHARE: f64 = 0.15;

impl SharedScenario {
    /// The scenario `id` names: the one its seed draws, keeping only the listed callers.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ScenarioId;
    /// use fixed_window_sim::shared::SharedScenario;
    ///
    /// let a = SharedScenario::generate(&ScenarioId::seed(7));
    /// assert_eq!(a, SharedScenario::generate(&ScenarioId::seed(7)));
    /// assert!((1..=16).contains(&a.processes.len()));
    /// ```
    pub fn generate(id: &ScenarioId) -> SharedScenario {
        let mut rng = ChaCha8Rng::seed_from_u64(id.seed ^ 0x5AA2_ED00);
        let limit = match rng.random_range(0..100) {
            0..20 => 1,
            20..75 => rng.random_range(2..=10),
            75..95 => rng.random_range(11..=100),
            _ => rng.random_range(101..=2_000),
        };
        let processes = pick_processes(&mut rng);
        let slowest = processes
            .iter()
            .map(|p| p.link.delay_ns + p.link.jitter_ns)
            .max()
            .unwrap_or(0);
        let period_us = match rng.random_range(0..100) {
            // Windows of a few microseconds: requests land on boundaries all the time.
            0..20 => rng.random_range(1..=20),
            20..75 => rng.random_range(20..=20_000),
            75..95 => rng.random_range(20_000..=2_000_000),
            // Windows much shorter than a round trip.
            _ => (slowest / 1_000 / rng.random_range(2..=20)).max(1),
        };
        // Limits, periods and keys as wide as users meet, in some scenarios, from a generator
        // of their own.
        let mut wide = Wide::of(id.seed);
        let limit = wide.limit().unwrap_or(limit);
        let long_period = wide.period_us();
        let period_us = long_period.unwrap_or(period_us);
        // A long window's traffic lasts at most about a minute, as the ordinary draws' longest:
        // over hours, the processes restarted while it lasts (refused, or never reaching the
        // server) would use the run's event budget up.
        let most_span = long_period.map_or(1 << 50, |_| LONG_PERIOD_SPAN_NS);
        let (key_mode, keys) = pick_keys(&mut rng);
        let keys = wide.keys(keys.len()).unwrap_or(keys);
        let window_ns = period_us * 1_000;
        let callers = pick_callers(
            &mut rng,
            &processes,
            keys.len(),
            (limit, window_ns),
            most_span,
        );
        let span = callers
            .last()
            .map_or(window_ns, |c| c.arrival)
            .max(window_ns)
            .min(most_span);
        let faults = pick_faults(&mut rng, &processes, span, window_ns);
        // Drawn from a generator of their own, so that every other draw stays what it was.
        let mut apart = ChaCha8Rng::seed_from_u64(id.seed ^ 0x0C0F_1C75);
        let time_key = apart.random_bool(0.15);
        let mut processes = draw_made(
            id.seed,
            with_leases(id.seed, limit, with_local_shares(id.seed, limit, processes)),
        );
        // Once the stored configuration is lost (a restart, a failover), whichever process runs
        // the script first stores its own, and the others are refused.
        if processes.len() >= 2 && apart.random_bool(0.2) {
            let misconfiguration = misconfigure(&mut apart, limit, period_us);
            if let Some(last) = processes.last_mut() {
                last.misconfigured = Some(misconfiguration);
            }
        }
        slow_one(&mut apart, &mut processes);
        let origin = pick_origin(&mut apart, &mut wide, (period_us, long_period), span);
        // Each process's age, from a generator of its own so that every other draw stays
        // what it was.
        draw_ages(id.seed, &mut processes);
        // Each process's clock resolution, likewise.
        let processes = with_resolutions(id.seed, period_us, processes);
        let mut callers = callers;
        weigh(&mut apart, &mut callers, limit);
        // Changes of the limit over the whole traffic (drawn before callers are cut, so a
        // shrink keeps them as they were).
        let limit_changes = pick_limit_changes(id.seed, limit, &processes, &callers);
        let until = callers.last().map_or(0, |c| c.arrival);
        let hand_backs = pick_hand_backs(id.seed, &processes, &callers, &faults);
        let refused = refusals(id.seed, &faults, span, (&processes, &keys), &mut callers);
        let callers = match &id.kept {
            None => callers,
            Some(kept) => kept
                .iter()
                .filter_map(|&i| callers.get(i as usize).copied())
                .collect(),
        };
        let mut scenario = SharedScenario {
            id: id.clone(),
            limit,
            period_us,
            processes,
            keys,
            key_mode,
            callers,
            faults,
            time_key,
            origin,
            limit_changes,
            cluster: None,
            replication: None,
            hand_backs,
            key_limits: KeyLimits::default(),
            key_live: Vec::new(),
        };
        scenario.draw_apart(&mut apart, span, refused);
        scenario.key_limits = pick_key_limits(
            id.seed,
            limit,
            (scenario.processes.len(), scenario.keys.len()),
        );
        scenario.key_live = pick_key_live(&scenario, until);
        scenario
    }

    /// Draws the cluster, then the replication, each from a generator of its own; adds the
    /// refusals of the limiter's user drawn before.
    fn draw_apart(&mut self, apart: &mut ChaCha8Rng, span: u64, refused: Vec<(u64, Fault)>) {
        self.draw_cluster(apart, span);
        self.replication = pick_replication(self.id.seed, &self.processes, span);
        // After the others, so that a fault's index (which a cut names) stays what it was;
        // the run takes every fault in order of time.
        self.faults.planned.extend(refused);
    }

    /// Draws whether the scenario runs on a cluster (one in four, from a generator of its
    /// own) and, if so, its cluster, and keeps of the rest what a cluster allows.
    fn draw_cluster(&mut self, apart: &mut ChaCha8Rng, span: u64) {
        let drawn = Drawn {
            seed: self.id.seed,
            config: Config::of(
                SHARED_NAME,
                self.limit,
                Duration::from_micros(self.period_us),
            )
            .ok(),
            keys: &self.keys,
            processes: &self.processes,
            span,
        };
        let mut faults = core::mem::take(&mut self.faults);
        self.cluster = pick_cluster(&drawn, &mut faults);
        self.faults = faults;
        if self.cluster.is_some() {
            clustered(apart, &mut self.time_key, &mut self.origin, self.period_us);
        }
    }

    /// The limit and period (µs) process `process` is configured with.
    pub fn configured(&self, process: u16) -> (u32, u64) {
        match self
            .processes
            .get(process as usize)
            .and_then(|p| p.misconfigured)
        {
            None => (self.limit, self.period_us),
            Some(Misconfiguration::Limit(limit)) => (limit, self.period_us),
            Some(Misconfiguration::Period(period_us)) => (self.limit, period_us),
        }
    }

    /// Whether the scenario is healthy: no fault (delay and jitter only), and every process's
    /// link faster than its timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ScenarioId;
    /// use fixed_window_sim::shared::{Faults, SharedScenario};
    ///
    /// let mut scenario = SharedScenario::generate(&ScenarioId::seed(1));
    /// scenario.faults = Faults::default();
    /// assert!(scenario.healthy());
    /// scenario.processes[0].timeout = core::time::Duration::from_nanos(1);
    /// assert!(!scenario.healthy());
    /// ```
    pub fn healthy(&self) -> bool {
        self.faults.healthy()
            && !self.processes.iter().any(ProcessSpec::slow_link)
            && self.cluster.as_ref().is_none_or(|c| c.faults.is_empty())
    }

    /// The limit process `process` decides key `key` by: the key's own, or the limiter's
    /// it is configured with.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::ScenarioId;
    /// use fixed_window_sim::shared::{KeyLimits, SharedScenario};
    ///
    /// let mut scenario = SharedScenario::generate(&ScenarioId::seed(1));
    /// scenario.key_limits = KeyLimits { agreed: vec![(0, 7)], apart: Some((0, 0, 9)) };
    /// assert_eq!((scenario.key_limit(0, 0), scenario.key_limit(1, 0)), (9, 7));
    /// assert_eq!(scenario.key_limit(0, 1), scenario.configured(0).0);
    /// ```
    pub fn key_limit(&self, process: u16, key: u16) -> u32 {
        self.key_limits
            .own(process, key)
            .unwrap_or_else(|| self.configured(process).0)
    }

    /// Whether process `process` is configured apart from the shared limit and period.
    pub fn is_misconfigured(&self, process: u16) -> bool {
        self.processes
            .get(process as usize)
            .is_some_and(|p| p.misconfigured.is_some())
    }
}

/// What a scenario on a cluster keeps of the rest of its draw: no time key (on a cluster it
/// would be in another slot than the counters, and registering fails), and a fixed origin
/// (drawn as the others are if it has none), so that a process that registers after the
/// configuration key was lost stores the same grid. A process configured apart stays: refused
/// at registration while the configuration is stored, and by the counters the others wrote
/// once it registered after the configuration key was lost.
fn clustered(
    apart: &mut ChaCha8Rng,
    time_key: &mut bool,
    origin: &mut Option<u64>,
    period_us: u64,
) {
    *time_key = false;
    if origin.is_none() {
        let start_us = SERVER_EPOCH_NS / 1_000;
        *origin = Some(match apart.random_range(0..3) {
            0 => 0,
            1 => start_us.saturating_sub(apart.random_range(0..=10 * period_us)),
            _ => (start_us + apart.random_range(0..=3 * period_us)).min(MAX_ORIGIN_MICROS),
        });
    }
}

/// Another limit or period than `limit` and `period_us`, either of them, that the limiter
/// accepts: one more (one less at `u32::MAX`), or twice as long (half, past `MAX_PERIOD`).
/// A fixed origin, or none (the first registration's time): the Unix epoch, or an instant some
/// periods before the server's time at the start, or a little after it (a boundary all the
/// same: the grid extends back from it). A long window whose first boundary would come long
/// after the traffic gets, in half of them, a fixed origin that puts a boundary within it.
fn pick_origin(
    apart: &mut ChaCha8Rng,
    wide: &mut Wide,
    (period_us, long_period): (u64, Option<u64>),
    span: u64,
) -> Option<u64> {
    let origin = apart.random_bool(FIXED_ORIGIN_SHARE).then(|| {
        let start_us = SERVER_EPOCH_NS / 1_000;
        match apart.random_range(0..3) {
            0 => 0,
            1 => start_us.saturating_sub(apart.random_range(0..=10 * period_us)),
            _ => (start_us + apart.random_range(0..=3 * period_us)).min(MAX_ORIGIN_MICROS),
        }
    });
    match (origin, long_period) {
        (None, Some(period)) => wide.origin_within(period, span),
        (origin, _) => origin,
    }
}

/// In some scenarios, one process's link made slow: never the process configured apart, nor
/// the only one that could store the configuration it waits for.
fn slow_one(apart: &mut ChaCha8Rng, processes: &mut [ProcessSpec]) {
    if apart.random_bool(SLOW_LINK_SHARE) {
        let candidates: Vec<usize> = (0..processes.len())
            .filter(|&p| processes[p].misconfigured.is_none())
            .collect();
        let apart_waits = candidates.len() < processes.len();
        if !(apart_waits && candidates.len() < 2) {
            let index = candidates[apart.random_range(0..candidates.len())];
            slow_down(apart, &mut processes[index]);
        }
    }
}

fn misconfigure(apart: &mut ChaCha8Rng, limit: u32, period_us: u64) -> Misconfiguration {
    if apart.random_bool(0.5) {
        Misconfiguration::Limit(limit.checked_add(1).unwrap_or(limit - 1))
    } else if period_us <= MAX_PERIOD_US / 2 {
        Misconfiguration::Period(period_us * 2)
    } else {
        Misconfiguration::Period(period_us / 2)
    }
}

/// Weighted callers and drains, in some scenarios: most callers still take one permit.
fn weigh(apart: &mut ChaCha8Rng, callers: &mut [SharedCaller], limit: u32) {
    if !apart.random_bool(WEIGHTED_SHARE) {
        return;
    }
    for caller in callers {
        caller.weight = match apart.random_range(0..10) {
            0..6 => Weight::One,
            6..9 => Weight::Units(match apart.random_range(0..8) {
                0 => 0,
                // Above the limit, where there is room above it.
                1 => limit.saturating_add(1),
                _ => apart.random_range(1..=limit),
            }),
            _ => Weight::Rest,
        };
        if caller.weight == Weight::Rest {
            caller.waits = false;
        }
    }
}

fn pick_keys(rng: &mut ChaCha8Rng) -> (KeyMode, Vec<String>) {
    let (mode, count) = match rng.random_range(0..100) {
        0..45 => (KeyMode::Hot, 1),
        45..80 => (KeyMode::Few, rng.random_range(2..=5)),
        _ => (KeyMode::Many, rng.random_range(6..=200)),
    };
    (mode, (0..count).map(|k| format!("k{k}")).collect())
}

fn pick_key(rng: &mut ChaCha8Rng, keys: usize) -> u16 {
    let key = if keys > 5 && rng.random_bool(0.5) {
        // Half the traffic on the first few keys: some hot keys among many cold ones.
        rng.random_range(0..3)
    } else {
        rng.random_range(0..keys)
    };
    u16::try_from(key).unwrap_or(0)
}

/// The refusals of the limiter's user in a scenario with `faults` (none in a healthy one)
/// whose calls arrive over `span`, with calls after each has ended added to `callers`: from
/// generators of their own.
fn refusals(
    seed: u64,
    faults: &Faults,
    span: u64,
    (processes, keys): (&[ProcessSpec], &[String]),
    callers: &mut Vec<SharedCaller>,
) -> Vec<(u64, Fault)> {
    if faults.healthy() {
        return Vec::new();
    }
    let credentials = pick_credentials(seed, span);
    calls_after_refusals(seed, &credentials, processes, keys.len(), callers);
    credentials
}

/// Adds to `callers` (kept in order of arrival) calls of `try_acquire` after each refusal of
/// `credentials` has ended, later than the longest back-off between two connections and the
/// slowest round trip: one or two processes each calling four to ten times, 50 to 400 ms
/// apart, so that a process that does not make its connection anew, or waits too long before
/// it does, shows it; drawn from a generator of their own.
fn calls_after_refusals(
    seed: u64,
    credentials: &[(u64, Fault)],
    processes: &[ProcessSpec],
    keys: usize,
    callers: &mut Vec<SharedCaller>,
) {
    if credentials.is_empty() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0AF7_E2AC_CE55);
    let slowest = processes
        .iter()
        .map(|p| 2 * (p.link.delay_ns + p.link.jitter_ns))
        .max()
        .unwrap_or(0);
    let after = u64::try_from(fixed_window_redis::RENEWAL_MAX.as_nanos())
        .unwrap_or(u64::MAX)
        .saturating_add(100_000_000)
        .saturating_add(slowest);
    let process_count = u16::try_from(processes.len()).unwrap_or(1);
    let key_count = u16::try_from(keys).unwrap_or(1).max(1);
    // After every caller drawn before, so that their indices (which a cut names) stay.
    let last = callers.last().map_or(0, |caller| caller.arrival);
    let mut added = Vec::new();
    for &(at, fault) in credentials {
        let Some(until) = refused_until(at, fault) else {
            continue;
        };
        // One or two processes calling every 50 to 400 ms for a while: a process that waits
        // longer than it should before it connects anew is refused between two of them.
        for _ in 0..rng.random_range(1..=2) {
            let process = rng.random_range(0..process_count);
            let mut arrival = until
                .saturating_add(after)
                .max(last)
                .saturating_add(rng.random_range(0..=500_000_000));
            for _ in 0..rng.random_range(4..=10) {
                added.push(SharedCaller {
                    arrival,
                    process,
                    key: rng.random_range(0..key_count),
                    waits: false,
                    weight: Weight::One,
                });
                arrival = arrival.saturating_add(rng.random_range(50_000_000..=400_000_000));
            }
        }
    }
    // Stable: callers arriving at once keep the order they were drawn in.
    added.sort_by_key(|caller| caller.arrival);
    callers.extend(added);
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn pick_callers(
    rng: &mut ChaCha8Rng,
    processes: &[ProcessSpec],
    keys: usize,
    (limit, period_ns): (u32, u64),
    most_span: u64,
) -> Vec<SharedCaller> {
    let first = processes.iter().map(|p| p.start).min().unwrap_or(0);
    let slowest = processes
        .iter()
        .map(|p| 2 * (p.link.delay_ns + p.link.jitter_ns))
        .max()
        .unwrap_or(0);
    let count = rng.random_range(10..=MOST_CALLERS);
    let mut arrivals = Vec::with_capacity(count);
    // The run lasts a few windows or a few round trips, whichever is longer.
    let span = period_ns
        .saturating_mul(rng.random_range(2..=40))
        .max(slowest.saturating_mul(rng.random_range(5..=50)))
        .min(most_span);
    let rate = (count as f64) / (span as f64);
    while arrivals.len() < count {
        match rng.random_range(0..4) {
            // Poisson.
            0 => {
                let mut t = first as f64;
                for _ in 0..rng.random_range(1..=count) {
                    let u: f64 = rng.random_range(f64::EPSILON..1.0);
                    t += -u.ln() / rate;
                    arrivals.push(t as u64);
                }
            }
            // Steady.
            1 => {
                let step = span / (count as u64).max(1);
                let start = first + rng.random_range(0..=step);
                for i in 0..rng.random_range(1..=count as u64) {
                    arrivals.push(start + i * step);
                }
            }
            // Bursts around the window boundaries of a grid started near the first process's
            // registration: the real origin is that registration's server time.
            2 => {
                for _ in 0..rng.random_range(1..=4) {
                    let k = rng.random_range(1..=20_u64);
                    // Within the span's bound, however long the window.
                    let at = first
                        .saturating_add(k.saturating_mul(period_ns))
                        .min(most_span);
                    let spread = slowest.max(1);
                    for _ in 0..rng.random_range(1..=(limit as usize * 2 + 1).min(count)) {
                        let offset = rng.random_range(0..=spread);
                        arrivals.push(if rng.random_bool(0.5) {
                            at.saturating_sub(offset)
                        } else {
                            at + offset
                        });
                    }
                }
            }
            // A herd: many callers at once.
            _ => {
                let at = first + rng.random_range(0..=span);
                for _ in 0..rng.random_range(1..=count / 2 + 1) {
                    arrivals.push(at + rng.random_range(0..=slowest / 4 + 1));
                }
            }
        }
    }
    arrivals.truncate(count);
    arrivals.sort_unstable();
    let waiting = rng.random_range(0.0..1.0);
    let process_count = processes.len();
    arrivals
        .into_iter()
        .map(|arrival| SharedCaller {
            arrival,
            process: u16::try_from(rng.random_range(0..process_count)).unwrap_or(0),
            key: pick_key(rng, keys),
            waits: rng.random_bool(waiting),
            weight: Weight::One,
        })
        .collect()
}

/// The share of processes whose age is drawn apart from the ordinary clock offset.
const AGED_SHARE: f64 = 0.3;

/// Whether each process's limiter is made with `start` or `connect`: drawn from a generator of
/// their own, so that every other draw stays what it was.
fn draw_made(seed: u64, mut processes: Vec<ProcessSpec>) -> Vec<ProcessSpec> {
    let mut made = ChaCha8Rng::seed_from_u64(seed ^ 0x057A_A7ED);
    for process in &mut processes {
        process.started = made.random_bool(STARTED_SHARE);
    }
    processes
}

/// Draws the age of some processes: where each clock's timeline starts, which the ordinary
/// draw (a reading of up to 2^45 ns, about ten hours, at virtual time zero) leaves almost
/// never young and never far. A process born with its clock (its timeline starting at zero,
/// as `SystemClock`'s does at its first reading), one a few nanoseconds to a second old, or
/// one whose clock reads years to a century: processes of different ages on one limiter.
fn draw_ages(seed: u64, processes: &mut [ProcessSpec]) {
    let mut ages = ChaCha8Rng::seed_from_u64(seed ^ 0x0A6E_5A6E);
    for process in processes.iter_mut() {
        if !ages.random_bool(AGED_SHARE) {
            continue;
        }
        process.clock.offset_ns = match ages.random_range(0..4) {
            // Born with its clock: the timeline starts at the process's first moment.
            0 => 0,
            1 => ages.random_range(1..=1_000),
            2 => ages.random_range(1_000..=1_000_000_000),
            // Years to a century and a half: far from zero, never near `Instant::MAX`.
            _ => ages.random_range(1_u64 << 55..=1_u64 << 62),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_draw_every_key_mode_and_the_whole_range_of_processes() {
        let scenarios: Vec<_> = (0..300)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        for mode in [KeyMode::Hot, KeyMode::Few, KeyMode::Many] {
            assert!(scenarios.iter().any(|s| s.key_mode == mode), "{mode:?}");
        }
        assert!(scenarios.iter().any(|s| s.processes.len() == 1));
        assert!(scenarios.iter().any(|s| s.processes.len() >= 12));
        assert!(scenarios.iter().all(|s| s.processes.len() <= 16));
        assert!(
            scenarios
                .iter()
                .all(|s| s.callers.is_sorted_by_key(|c| c.arrival))
        );
    }
}
