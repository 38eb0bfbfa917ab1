//! The faults a shared-limiter scenario injects, drawn swarm style: most scenarios are
//! healthy (delay and jitter only); the others each enable their own mix of fault kinds.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use fixed_window_redis::RENEWAL_MAX;

use crate::shared::keyspace::MOST_LAG;
use crate::shared::process::ProcessSpec;

/// A fault planned at a virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A process's connection is reset.
    Reset {
        /// The process.
        process: u16,
    },
    /// The server stops executing requests for `for_ns`.
    Pause {
        /// How long.
        for_ns: u64,
    },
    /// The server restarts without persistence, down for `for_ns`.
    Restart {
        /// How long.
        for_ns: u64,
    },
    /// A replica that lags by `lag` writes takes over.
    Failover {
        /// Writes it lacks (at most 16).
        lag: u8,
        /// Whether it has the scripts.
        keeps_scripts: bool,
    },
    /// `SCRIPT FLUSH`.
    Flush,
    /// The server's clock steps by `delta_ns`.
    ClockStep {
        /// Forward if positive.
        delta_ns: i64,
    },
    /// A client process crashes mid-call and restarts after `for_ns`.
    Crash {
        /// The process.
        process: u16,
        /// How long it stays down.
        for_ns: u64,
    },
    /// The server's access control refuses the limiter's user for `for_ns`, then takes it
    /// again (the user re-created, the permission granted again).
    Refuse {
        /// What it refuses.
        refusal: Refusal,
        /// How long.
        for_ns: u64,
    },
    /// The server restarts without persistence, down for `for_ns`, and comes back without
    /// the limiter's user, which is provisioned `provisioned_ns` after it is back: until then
    /// every connection is refused (`WRONGPASS`).
    RestartWithoutUser {
        /// How long it is down.
        for_ns: u64,
        /// How long after it is back the user is created.
        provisioned_ns: u64,
    },
}

/// What the server's access control refuses the limiter's user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The user does not exist (deleted by `ACL DELUSER`, which closes its connections, or
    /// not provisioned yet after a restart): every new connection is refused (`WRONGPASS`)
    /// until it is created.
    NoUser,
    /// The user may no longer run the limiter's commands: each `EVALSHA` and `SCRIPT LOAD` is
    /// refused (`NOPERM`) over the connection it came on, which stays open.
    PermissionRevoked,
    /// The user's password changed (`ACL SETUSER … resetpass >new`) and its connections were
    /// closed (`CLIENT KILL USER`), as an operator enforcing a rotation does: every new
    /// connection made with the old password is refused (`WRONGPASS`). The refusal's end is
    /// when each process is given the new password, as a user does with
    /// [`SharedRateLimiter::set_client`](fixed_window_redis::SharedRateLimiter::set_client).
    PasswordRotated,
    /// The server requires a password its clients have not given (`requirepass`, the default
    /// user's `nopass` removed) and their connections were closed, as a restart with that
    /// configuration does: each command on a connection made meanwhile is answered `NOAUTH`
    /// while the requirement lasts (Redis checks at each command, so the same connection works
    /// once it is lifted).
    AuthRequired,
    /// The TLS handshake fails (the server's certificate expired or was rotated to one
    /// signed by a CA its clients do not trust yet) and the server's connections were
    /// closed, as a restart with the new certificate closes them: every new connection fails
    /// before any command is sent, with the error rustls gives (which the limiter counts as
    /// access denied, as it does a refused authentication), until the certificate is trusted
    /// again.
    HandshakeRefused,
}

/// A scenario's faults.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Faults {
    /// Requests lost on the way, per million.
    pub request_loss_ppm: u32,
    /// Replies lost on the way back, per million.
    pub reply_loss_ppm: u32,
    /// The planned faults, each at its virtual time: in order of time, then the refusals of
    /// the limiter's user (drawn apart), in order of time among themselves. A run takes them
    /// all in order of time.
    pub planned: Vec<(u64, Fault)>,
}

impl Faults {
    /// Whether nothing is injected: delay and jitter only. (A scenario is healthy if, besides,
    /// every link is faster than its timeout: [`SharedScenario::healthy`](crate::shared::SharedScenario::healthy).)
    pub fn healthy(&self) -> bool {
        self.request_loss_ppm == 0 && self.reply_loss_ppm == 0 && self.planned.is_empty()
    }
}

/// The largest step of the server's clock drawn, in nanoseconds: a year.
const MOST_STEP_NS: u64 = 366 * 24 * 3_600 * 1_000_000_000;

/// How many fault kinds [`pick_faults`] chooses among.
const KINDS: usize = 9;

/// Draws the faults of a scenario whose calls arrive over `span` nanoseconds.
pub(crate) fn pick_faults(
    rng: &mut ChaCha8Rng,
    processes: &[ProcessSpec],
    span: u64,
    period_ns: u64,
) -> Faults {
    // The healthy case is the most common.
    if rng.random_bool(0.4) {
        return Faults::default();
    }
    let mut enabled: Vec<usize> = (0..KINDS).filter(|_| rng.random_bool(0.3)).collect();
    if enabled.is_empty() {
        enabled.push(rng.random_range(0..KINDS));
    }
    let timeout = processes
        .iter()
        .map(|p| u64::try_from(p.timeout.as_nanos()).unwrap_or(u64::MAX))
        .max()
        .unwrap_or(1_000_000);
    let process_count = u16::try_from(processes.len()).unwrap_or(1);
    let mut faults = Faults::default();
    let at = |rng: &mut ChaCha8Rng| rng.random_range(0..=span);
    for kind in enabled {
        let times = rng.random_range(1..=3);
        match kind {
            0 => faults.request_loss_ppm = rng.random_range(5_000..=300_000),
            1 => faults.reply_loss_ppm = rng.random_range(5_000..=300_000),
            2 => {
                for _ in 0..times {
                    let process = rng.random_range(0..process_count);
                    faults.planned.push((at(rng), Fault::Reset { process }));
                }
            }
            3 => {
                for _ in 0..times {
                    let for_ns = rng.random_range(timeout / 2..=timeout * 5);
                    faults.planned.push((at(rng), Fault::Pause { for_ns }));
                }
            }
            4 => {
                for _ in 0..times.min(2) {
                    let for_ns = rng.random_range(0..=timeout * 2);
                    faults.planned.push((at(rng), Fault::Restart { for_ns }));
                }
            }
            5 => {
                for _ in 0..times.min(2) {
                    let lag = rng.random_range(0..=u8::try_from(MOST_LAG).unwrap_or(16));
                    let keeps_scripts = rng.random_bool(0.5);
                    faults
                        .planned
                        .push((at(rng), Fault::Failover { lag, keeps_scripts }));
                }
            }
            6 => {
                for _ in 0..times {
                    faults.planned.push((at(rng), Fault::Flush));
                }
            }
            7 => {
                for _ in 0..times {
                    let size = match rng.random_range(0..3) {
                        // Within a window, or across a few.
                        0 => rng.random_range(1..=period_ns.max(1)),
                        1 => rng.random_range(1..=period_ns.saturating_mul(3).max(1)),
                        // Seconds: past the counters' expiry margin.
                        _ => rng.random_range(1_000_000..=3_000_000_000),
                    };
                    // Across a few windows of a day or a century, a year at most: the
                    // server's clock stays within the years it can read.
                    let size = i64::try_from(size.min(MOST_STEP_NS)).unwrap_or(i64::MAX);
                    let delta_ns = if rng.random_bool(0.5) { size } else { -size };
                    faults
                        .planned
                        .push((at(rng), Fault::ClockStep { delta_ns }));
                }
            }
            _ => {
                for _ in 0..times.min(2) {
                    let process = rng.random_range(0..process_count);
                    let for_ns = rng.random_range(0..=timeout * 4);
                    faults
                        .planned
                        .push((at(rng), Fault::Crash { process, for_ns }));
                }
            }
        }
    }
    // Stable: faults drawn for the same instant keep the order they were drawn in.
    faults.planned.sort_by_key(|&(t, _)| t);
    faults
}

/// The share of the scenarios with faults whose server also refuses the limiter's user for a
/// while (about one scenario in eight of all).
const CREDENTIALS_SHARE: f64 = 0.2;

/// Draws, from a generator of its own (so that every other draw of `seed` stays what it
/// was), the credentials faults of a scenario whose calls arrive over `span` nanoseconds: in
/// about one scenario in eight, one or two refusals of the limiter's user (deleted, its
/// permission revoked, a restart that comes back without it), each beginning within the first
/// half of the traffic and lasting from a millisecond to three seconds, a few times longer
/// than the longest back-off between two connections ([`RENEWAL_MAX`]) at most; and in about
/// half of those a rotation of the password ([`Refusal::PasswordRotated`]), its processes given
/// the new one as long after, and in about half a server requiring a password its clients have
/// not given ([`Refusal::AuthRequired`]), and in about half a refused TLS handshake
/// ([`Refusal::HandshakeRefused`]), each from a generator of its own.
pub(crate) fn pick_credentials(seed: u64, span: u64) -> Vec<(u64, Fault)> {
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ 0xAC1_DE1E7E);
    if !rng.random_bool(CREDENTIALS_SHARE) {
        return Vec::new();
    }
    let most = u64::try_from(RENEWAL_MAX.as_nanos()).unwrap_or(u64::MAX) * 6;
    let lasting = |rng: &mut ChaCha8Rng| match rng.random_range(0..3) {
        // Shorter than the first back-off, or than a few of them.
        0 => rng.random_range(1_000_000..=50_000_000),
        1 => rng.random_range(50_000_000..=most / 3),
        _ => rng.random_range(most / 3..=most),
    };
    let mut planned: Vec<(u64, Fault)> = (0..rng.random_range(1..=2))
        .map(|_| {
            let at = rng.random_range(0..=span / 2);
            let fault = match rng.random_range(0..3) {
                0 => Fault::Refuse {
                    refusal: Refusal::NoUser,
                    for_ns: lasting(&mut rng),
                },
                1 => Fault::Refuse {
                    refusal: Refusal::PermissionRevoked,
                    for_ns: lasting(&mut rng),
                },
                _ => Fault::RestartWithoutUser {
                    for_ns: rng.random_range(0..=10_000_000),
                    provisioned_ns: lasting(&mut rng),
                },
            };
            (at, fault)
        })
        .collect();
    // A rotated password, a server requiring authentication and a refused TLS handshake,
    // each in about half of them, each from a generator of its own.
    planned.extend(
        [
            (0x2077_A7ED, Refusal::PasswordRotated),
            (0x0A07_4E0A, Refusal::AuthRequired),
            (0x7150_CE27, Refusal::HandshakeRefused),
        ]
        .into_iter()
        .filter_map(|(salt, refusal)| {
            let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ salt);
            rng.random_bool(0.5).then(|| {
                let at = rng.random_range(0..=span / 2);
                let for_ns = lasting(&mut rng);
                (at, Fault::Refuse { refusal, for_ns })
            })
        }),
    );
    planned.sort_by_key(|&(t, _)| t);
    planned
}

/// When the refusal `fault` planned at `at` ends (virtual time), if it is one.
pub(crate) fn refused_until(at: u64, fault: Fault) -> Option<u64> {
    match fault {
        Fault::Refuse { for_ns, .. } => Some(at.saturating_add(for_ns)),
        Fault::RestartWithoutUser {
            for_ns,
            provisioned_ns,
        } => Some(at.saturating_add(for_ns).saturating_add(provisioned_ns)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use rand::SeedableRng;

    use super::*;
    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    fn processes() -> Vec<ProcessSpec> {
        let mut processes = SharedScenario::generate(&ScenarioId::seed(3)).processes;
        processes.truncate(2);
        for process in &mut processes {
            process.timeout = Duration::from_millis(1);
        }
        processes
    }

    #[test]
    fn two_in_five_scenarios_are_healthy_and_every_kind_is_drawn() {
        let processes = processes();
        let mut healthy = 0;
        let mut kinds = [false; KINDS];
        for seed in 0..2_000 {
            let faults = pick_faults(
                &mut ChaCha8Rng::seed_from_u64(seed),
                &processes,
                1_000_000_000,
                1_000_000,
            );
            healthy += usize::from(faults.healthy());
            kinds[0] |= faults.request_loss_ppm > 0;
            kinds[1] |= faults.reply_loss_ppm > 0;
            for &(_, fault) in &faults.planned {
                let kind = match fault {
                    Fault::Reset { .. } => 2,
                    Fault::Pause { .. } => 3,
                    Fault::Restart { .. } => 4,
                    Fault::Failover { .. } => 5,
                    Fault::Flush => 6,
                    Fault::ClockStep { .. } => 7,
                    Fault::Crash { .. } => 8,
                    Fault::Refuse { .. } | Fault::RestartWithoutUser { .. } => {
                        unreachable!("drawn apart")
                    }
                };
                kinds[kind] = true;
            }
        }
        assert!((700..900).contains(&healthy), "{healthy} healthy of 2,000");
        assert_eq!(kinds, [true; KINDS]);
    }

    #[test]
    fn planned_faults_are_in_order_within_the_span_and_name_real_processes() {
        let processes = processes();
        for seed in 0..500 {
            let faults = pick_faults(
                &mut ChaCha8Rng::seed_from_u64(seed),
                &processes,
                5_000_000,
                1_000,
            );
            assert!(faults.planned.is_sorted_by_key(|&(t, _)| t));
            for &(t, fault) in &faults.planned {
                assert!(t <= 5_000_000);
                match fault {
                    Fault::Reset { process } | Fault::Crash { process, .. } => {
                        assert!(usize::from(process) < processes.len());
                    }
                    Fault::Pause { for_ns } => assert!(for_ns >= 500_000, "{for_ns}"),
                    Fault::Failover { lag, .. } => assert!(usize::from(lag) <= MOST_LAG),
                    _ => {}
                }
            }
            assert!(faults.request_loss_ppm <= 300_000 && faults.reply_loss_ppm <= 300_000);
        }
    }

    #[test]
    fn credentials_faults_begin_in_the_first_half_and_each_kind_is_drawn() {
        let mut kinds = [false; 6];
        let mut scenarios = 0;
        for seed in 0..2_000 {
            let planned = pick_credentials(seed, 4_000_000_000);
            scenarios += usize::from(!planned.is_empty());
            for &(at, fault) in &planned {
                assert!(at <= 2_000_000_000);
                let until = refused_until(at, fault).expect("a refusal");
                assert!(until > at && until - at <= 3_010_000_000, "{fault:?}");
                kinds[match fault {
                    Fault::Refuse {
                        refusal: Refusal::NoUser,
                        ..
                    } => 0,
                    Fault::Refuse {
                        refusal: Refusal::PasswordRotated,
                        ..
                    } => 3,
                    Fault::Refuse {
                        refusal: Refusal::AuthRequired,
                        ..
                    } => 4,
                    Fault::Refuse {
                        refusal: Refusal::HandshakeRefused,
                        ..
                    } => 5,
                    Fault::Refuse { .. } => 1,
                    _ => 2,
                }] = true;
            }
        }
        assert!((300..500).contains(&scenarios), "{scenarios} of 2,000");
        assert_eq!(kinds, [true; 6]);
    }
}
