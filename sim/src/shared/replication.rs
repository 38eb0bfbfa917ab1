//! Replication and `WAIT`, in the scenarios whose processes wait for replicas
//! (`Config::with_wait_for_replicas(1)`): each primary's replica receives every write after a
//! delay drawn per scenario, and receives and acknowledges nothing while it is down; `WAIT 1 t`
//! after a script call answers once the replica has acknowledged every write of that
//! connection so far, or after `t` with the replicas that had (none); a failover promotes the
//! replica with exactly the writes it had received by then.
//!
//! The delay and the replicas' outages are drawn from a generator of their own, so that a
//! scenario that does not wait for replicas draws everything else as it did before.

use core::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::shared::process::ProcessSpec;

/// The share of scenarios whose processes wait for a replica.
const WAITING_SHARE: f64 = 0.2;

/// How a scenario's primaries replicate, when its processes wait for replicas: every process
/// of the scenario alike is configured with `with_wait_for_replicas(replicas)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Replication {
    /// The replicas each process waits for (each primary has one).
    pub replicas: u32,
    /// How long a write takes to reach the replica and be acknowledged, in nanoseconds.
    pub delay_ns: u64,
    /// Spans of virtual time, `[start, end)` in order of start, during which every replica is
    /// down (paused or failed): it receives and acknowledges nothing, and catches up as it
    /// comes back.
    pub outages: Vec<(u64, u64)>,
}

impl Replication {
    /// The first instant at or after `t` at which the replicas are up.
    fn up_from(&self, t: u64) -> u64 {
        let mut at = t;
        for &(start, end) in &self.outages {
            if (start..end).contains(&at) {
                at = end;
            }
        }
        at
    }

    /// When a write the primary made at `t` is acknowledged by the replica: after the delay,
    /// and never while the replica is down.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::Replication;
    ///
    /// let replication = Replication { replicas: 1, delay_ns: 10, outages: vec![(100, 200)] };
    /// assert_eq!(replication.acknowledged_at(5), 15);
    /// assert_eq!(replication.acknowledged_at(95), 200);
    /// ```
    pub fn acknowledged_at(&self, t: u64) -> u64 {
        self.up_from(t.saturating_add(self.delay_ns))
    }

    /// `WAIT replicas timeout` run at `t` on a connection whose last write is acknowledged at
    /// `last_acknowledged` (0 if it wrote nothing): when it answers, and how many replicas it
    /// counts. It answers as soon as the replica is up and has acknowledged that write; or
    /// after `timeout_ns`, counting none.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::shared::Replication;
    ///
    /// let replication = Replication { replicas: 1, delay_ns: 10, outages: vec![(100, 200)] };
    /// assert_eq!(replication.wait(50, 60, 1_000), (60, 1));
    /// assert_eq!(replication.wait(50, 60, 5), (55, 0));
    /// assert_eq!(replication.wait(150, 0, 1_000), (200, 1));
    /// ```
    pub fn wait(&self, t: u64, last_acknowledged: u64, timeout_ns: u64) -> (u64, u32) {
        let ready = self.up_from(t.max(last_acknowledged));
        let deadline = t.saturating_add(timeout_ns);
        if ready <= deadline {
            (ready, self.replicas)
        } else {
            (deadline, 0)
        }
    }

    /// Whether a `WAIT` run at `t` with `timeout_ns` could rightly count no replica: the delay
    /// outlasts it, or the replica was down at some instant from a delay before `t` to the
    /// timeout's end. The oracle's check that an `Unreplicated` outcome has a real cause.
    pub fn may_lack(&self, t: u64, timeout_ns: u64) -> bool {
        let from = t.saturating_sub(self.delay_ns);
        let to = t.saturating_add(timeout_ns);
        self.delay_ns > timeout_ns
            || self
                .outages
                .iter()
                .any(|&(start, end)| start <= to && end > from)
    }
}

/// How long `WAIT` waits for a process with `timeout`, in nanoseconds: half the timeout in
/// whole milliseconds, at least one, as the production client asks (`invocation.rs`).
pub(crate) fn wait_ns(timeout: Duration) -> u64 {
    let millis = u64::try_from(timeout.as_millis() / 2)
        .unwrap_or(u64::MAX)
        .max(1);
    millis.saturating_mul(1_000_000)
}

/// Draws whether the processes of the scenario of `seed` wait for a replica (one scenario in
/// five) and, if so, the replication: a delay from a microsecond to three times the shortest
/// `WAIT` timeout of its processes (past it in some), and in some scenarios one or two spans of
/// the traffic's `span` during which the replicas are down.
pub(crate) fn pick_replication(
    seed: u64,
    processes: &[ProcessSpec],
    span: u64,
) -> Option<Replication> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0E91_1CA7_3D00);
    if !rng.random_bool(WAITING_SHARE) {
        return None;
    }
    let wait = processes
        .iter()
        .map(|p| wait_ns(p.timeout))
        .min()
        .unwrap_or(1_000_000);
    let delay_ns = match rng.random_range(0..100) {
        0..55 => rng.random_range(1_000..=(wait / 10).max(1_000)),
        55..85 => rng.random_range(wait / 10..=wait),
        _ => rng.random_range(wait..=wait * 3),
    };
    let mut outages = Vec::new();
    if rng.random_bool(0.3) {
        for _ in 0..rng.random_range(1..=2) {
            let start = rng.random_range(0..=span);
            let length = rng.random_range(1..=wait * 4);
            outages.push((start, start.saturating_add(length)));
        }
        outages.sort_unstable();
    }
    Some(Replication {
        replicas: 1,
        delay_ns,
        outages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScenarioId;
    use crate::shared::SharedScenario;

    fn replication(delay_ns: u64, outages: Vec<(u64, u64)>) -> Replication {
        Replication {
            replicas: 1,
            delay_ns,
            outages,
        }
    }

    #[test]
    fn a_write_is_acknowledged_after_the_delay_and_never_while_the_replica_is_down() {
        let slow = replication(1_000, vec![(5_000, 8_000), (7_500, 9_000)]);
        assert_eq!(slow.acknowledged_at(0), 1_000);
        assert_eq!(slow.acknowledged_at(3_999), 4_999);
        // Reaching the replica while it is down: when it is back (from both outages).
        assert_eq!(slow.acknowledged_at(4_000), 9_000);
        assert_eq!(slow.acknowledged_at(8_500), 9_500);
    }

    #[test]
    fn wait_answers_once_the_connections_writes_are_acknowledged_or_at_its_timeout() {
        let slow = replication(1_000, vec![(5_000, 8_000)]);
        // A connection that wrote nothing: at once, while the replica is up.
        assert_eq!(slow.wait(100, 0, 500), (100, 1));
        // Its last write acknowledged within the timeout, or not.
        assert_eq!(slow.wait(100, 1_100, 1_000), (1_100, 1));
        assert_eq!(slow.wait(100, 1_100, 999), (1_099, 0));
        // A replica that is down acknowledges nothing, even writes it had received.
        assert_eq!(slow.wait(6_000, 0, 1_000), (7_000, 0));
        assert_eq!(slow.wait(6_000, 0, 2_000), (8_000, 1));
        // Every lack of acknowledgement has a cause the oracle accepts.
        for t in (0..10_000).step_by(250) {
            for last in [0, t / 2, t + 500, t + 1_500] {
                for timeout in [1, 500, 1_000, 3_000] {
                    if slow.wait(t, last.min(slow.acknowledged_at(t)), timeout).1 == 0 {
                        assert!(slow.may_lack(t, timeout), "{t} {last} {timeout}");
                    }
                }
            }
        }
    }

    #[test]
    fn wait_times_out_at_half_the_timeout_in_whole_milliseconds() {
        assert_eq!(wait_ns(Duration::from_micros(10)), 1_000_000);
        assert_eq!(wait_ns(Duration::from_millis(5)), 2_000_000);
        assert_eq!(wait_ns(Duration::from_secs(1)), 500_000_000);
    }

    #[test]
    fn one_scenario_in_five_waits_and_some_replicate_slower_than_wait_waits() {
        let mut waiting = 0;
        let mut past = 0;
        let mut down = 0;
        for seed in 0..1_000 {
            let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
            let Some(replication) = &scenario.replication else {
                continue;
            };
            waiting += 1;
            let wait = scenario
                .processes
                .iter()
                .map(|p| wait_ns(p.timeout))
                .min()
                .unwrap_or(0);
            past += usize::from(replication.delay_ns > wait);
            down += usize::from(!replication.outages.is_empty());
            assert!(replication.outages.is_sorted());
        }
        assert!((150..250).contains(&waiting), "{waiting}");
        assert!(past > 10 && down > 20, "{past} {down}");
    }
}
