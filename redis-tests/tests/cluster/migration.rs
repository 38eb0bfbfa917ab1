//! A slot migrated while attempts run on its keys: the cluster client follows `ASK` and then
//! `MOVED`, the counters move with their counts, and no window passes its limit.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};

use fixed_window_redis::{Config, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::{TestResult, hammer, origin, over, per_window, wall_micros};

const LIMIT: u32 = 5;
const PERIOD: Duration = Duration::from_millis(300);
/// "k" and "k1967" hash to slot 7629, the one migrated; "bob" and "dave" to others.
const KEYS: [&str; 4] = ["k", "k1967", "bob", "dave"];
const MIGRATED: u16 = 7629;
/// How long each step of the migration is left running under the attempts.
const STEP: Duration = Duration::from_millis(400);

#[test]
fn a_slot_migrated_under_attempts_keeps_every_window_within_its_limit() -> TestResult {
    let cluster = RedisCluster::start()?;
    let config = Config::of("migrate", LIMIT, PERIOD)?.with_timeout(Duration::from_secs(2))?;
    let limiter = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let origin = origin(&limiter)?;
    assert_eq!(cluster.slot_of(&config.cluster_counter_key("k"))?, MIGRATED);
    assert_eq!(
        cluster.slot_of(&config.cluster_counter_key("k1967"))?,
        MIGRATED
    );
    let source = cluster.master_of(MIGRATED)?;
    let target = cluster
        .masters()?
        .into_iter()
        .map(|node| node.port)
        .find(|&port| port != source)
        .ok_or("no other primary")?;

    let stop = AtomicBool::new(false);
    let steps = std::thread::scope(|scope| {
        let attempts = scope.spawn(|| hammer(&limiter, &KEYS, 4, 100_000, &stop));
        let steps = (|| -> Result<(u64, u64, u64), Box<dyn std::error::Error>> {
            std::thread::sleep(STEP);
            let migration = cluster.begin_migration(MIGRATED, target)?;
            std::thread::sleep(STEP);
            let moved = migration.move_keys()?;
            let moved_at = wall_micros();
            std::thread::sleep(STEP);
            let finishing = wall_micros();
            migration.finish()?;
            std::thread::sleep(STEP);
            Ok((moved, moved_at, finishing))
        })();
        stop.store(true, Ordering::Relaxed);
        (steps, attempts.join())
    });
    let (steps, attempts) = steps;
    let (moved, moved_at, finishing) = steps?;
    let (granted, unavailable) = attempts.map_err(|_| "an attempt thread panicked")?;

    assert_eq!(cluster.master_of(MIGRATED)?, target);
    assert!(moved >= 1, "the counters of the slot moved: {moved}");
    let windows = per_window(&granted, origin, PERIOD)?;
    assert_eq!(over(&windows, LIMIT), [], "windows over the limit");
    // While the slot was half moved, its keys were served (through ASK), and after, by the
    // new primary.
    let served = |from: u64, to: u64| {
        granted
            .iter()
            .filter(|permit| permit.key == "k" && (from..to).contains(&permit.at_us))
            .count()
    };
    assert!(
        served(moved_at, finishing) > 0,
        "no permit while the slot was importing"
    );
    assert!(
        served(finishing, u64::MAX) > 0,
        "no permit after the migration"
    );
    assert!(
        unavailable.len() * 100 <= granted.len(),
        "{} unavailable against {} permits",
        unavailable.len(),
        granted.len()
    );
    Ok(())
}
