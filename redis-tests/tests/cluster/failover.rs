//! A primary killed under attempts: its replica is promoted, the calls in between are answered
//! by the fail policy, and the limiter serves again without a restart. Asynchronous replication
//! can lose the counts the old primary acknowledged but had not yet sent: at most `limit` more
//! per key, in the window of the failover.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};

use fixed_window_redis::Config;
use fixed_window_redis_test::RedisCluster;

use crate::support::{
    Granted, TestResult, connect_replicated, hammer, origin, over, per_window, wall_micros,
};

const LIMIT: u32 = 5;
const PERIOD: Duration = Duration::from_millis(500);
/// "k" and "k1967" are in slot 7629, whose primary is killed; "bob" and "dave" elsewhere.
const KEYS: [&str; 4] = ["k", "k1967", "bob", "dave"];
const SLOT: u16 = 7629;
/// A key in slot 15495, on another primary than [`SLOT`].
const ELSEWHERE: &str = "a";

/// What happened around a primary killed under attempts.
struct Failover {
    granted: Vec<Granted>,
    /// Wall times of the `Unavailable` answers.
    unavailable: Vec<u64>,
    origin: u64,
    /// Wall times of the kill and of the replica found promoted.
    killed: u64,
    serving: u64,
    primary: u16,
    promoted: u16,
}

/// Four threads attempting `keys` on a limiter configured by `config`, the primary of
/// [`SLOT`] killed 600 ms in, and 1.5 s of attempts after its replica took over.
fn kill_the_primary_under_attempts(
    cluster: &mut RedisCluster,
    config: &Config,
    keys: &[&str],
) -> Result<Failover, Box<dyn std::error::Error>> {
    // Made again while a replica is slow to acknowledge the registration: the fault comes later.
    let limiter = connect_replicated(config, cluster)?;
    let origin = origin(&limiter)?;
    let primary = cluster.master_of(SLOT)?;
    let stop = AtomicBool::new(false);
    let (failover, attempts) = std::thread::scope(|scope| {
        let attempts = scope.spawn(|| hammer(&limiter, keys, 4, 100_000, &stop));
        let failover = (|| -> Result<(u64, u64, u16), Box<dyn std::error::Error>> {
            std::thread::sleep(Duration::from_millis(600));
            let killed = wall_micros();
            cluster.kill_master(primary)?;
            let promoted = cluster.wait_for_failover(primary, Duration::from_secs(30))?;
            let serving = wall_micros();
            std::thread::sleep(Duration::from_millis(1_500));
            Ok((killed, serving, promoted))
        })();
        stop.store(true, Ordering::Relaxed);
        (failover, attempts.join())
    });
    let (killed, serving, promoted) = failover?;
    let (granted, unavailable) = attempts.map_err(|_| "an attempt thread panicked")?;
    Ok(Failover {
        granted,
        unavailable,
        origin,
        killed,
        serving,
        primary,
        promoted,
    })
}

#[test]
fn a_killed_primary_is_replaced_and_the_limit_holds_within_the_stated_bound() -> TestResult {
    let mut cluster = RedisCluster::start()?;
    let config = Config::of("failover", LIMIT, PERIOD)?.with_timeout(Duration::from_millis(300))?;
    let Failover {
        granted,
        unavailable,
        origin,
        killed,
        serving,
        primary,
        promoted,
    } = kill_the_primary_under_attempts(&mut cluster, &config, &KEYS)?;

    assert_ne!(promoted, primary);
    assert_eq!(cluster.master_of(SLOT)?, promoted);
    // Between the kill and the promotion, the slot's calls failed closed.
    assert!(
        unavailable
            .iter()
            .any(|&at| (killed..serving).contains(&at)),
        "no call was answered by the fail policy while the slot had no primary"
    );
    // Served again by the new primary, without a restart.
    let after = granted
        .iter()
        .filter(|permit| permit.key == "k" && permit.at_us > serving)
        .count();
    assert!(
        after > 0,
        "no permit on the failed-over slot after the promotion"
    );
    // The stated bound: at most `limit` per window, but for the windows from the kill to the
    // promotion, where the new primary may lack what the old one had not replicated: at most
    // `limit` more per key.
    let windows = per_window(&granted, origin, PERIOD)?;
    let period = u64::try_from(PERIOD.as_micros())?;
    let window_of = |at: u64| at.saturating_sub(origin) / period;
    let during = window_of(killed)..=window_of(serving);
    let outside: std::collections::BTreeMap<_, _> = windows
        .iter()
        .filter(|((_, window), _)| !during.contains(window))
        .map(|(window, &count)| (window.clone(), count))
        .collect();
    assert_eq!(over(&outside, LIMIT), [], "windows over the limit");
    assert_eq!(
        over(&windows, 2 * LIMIT),
        [],
        "windows over the failover bound"
    );
    Ok(())
}

#[test]
fn waiting_for_the_replica_no_window_passes_its_limit_through_a_failover() -> TestResult {
    let mut cluster = RedisCluster::start()?;
    let config = Config::of("failover-wait", LIMIT, PERIOD)?
        .with_timeout(Duration::from_millis(300))?
        .with_wait_for_replicas(1);
    let Failover {
        granted,
        serving,
        origin,
        primary,
        promoted,
        ..
    } = kill_the_primary_under_attempts(&mut cluster, &config, &[KEYS[0], KEYS[1], ELSEWHERE])?;

    assert_ne!(promoted, primary);
    assert_ne!(cluster.master_of(cluster.slot_of(ELSEWHERE)?)?, promoted);
    // Every permit granted was held by the replica now serving: no window passes its limit,
    // the failover's included.
    let windows = per_window(&granted, origin, PERIOD)?;
    assert_eq!(over(&windows, LIMIT), [], "windows over the limit");
    // The promoted primary has no replica left (its old primary is dead), so its slots grant
    // nothing while the others go on: the price of the guarantee.
    let on_promoted = |key: &str| key != ELSEWHERE;
    assert!(
        !granted
            .iter()
            .any(|permit| on_promoted(&permit.key) && permit.at_us > serving),
        "a permit on a primary without a replica"
    );
    assert!(
        granted
            .iter()
            .any(|permit| !on_promoted(&permit.key) && permit.at_us > serving),
        "no permit on the other primaries after the failover"
    );
    Ok(())
}
