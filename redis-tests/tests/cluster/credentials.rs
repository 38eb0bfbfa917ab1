//! A cluster whose limiter user is deleted on every node and then restored, then whose
//! password is rotated: refused meanwhile (fail closed: `Unavailable`; fail open: flagged
//! permits nobody counted), and deciding again once the user is back, or once the limiter is
//! given a client with the new password, with the count on every primary exact. The time to
//! recover is measured and printed; only a generous bound (5 s) is asserted.

use core::time::Duration;
use std::time::Instant;

use fixed_window_redis::{Config, FailPolicy, SharedError, SharedRateLimiter, redis};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

const LIMIT: u32 = 1_000;

/// Far more than a recovery takes: a bound that cannot flake, not a speed.
const RECOVERY_BOUND: Duration = Duration::from_secs(5);

/// Keys spread over the three primaries.
const KEYS: usize = 12;

/// The limiter's user: everything (the cluster client also reads the topology).
const USER: &str = "limiter on ~* &* +@all";

fn on_every_node(cluster: &RedisCluster, args: &[impl AsRef<str>]) -> TestResult {
    for url in cluster.urls() {
        let port = url
            .rsplit(':')
            .next()
            .and_then(|port| port.trim_end_matches('/').parse().ok())
            .ok_or_else(|| format!("no port in {url}"))?;
        let mut node = cluster.node_client(port)?.get_connection()?;
        let mut command = redis::cmd(args[0].as_ref());
        for arg in &args[1..] {
            command.arg(arg.as_ref());
        }
        command.exec(&mut node)?;
    }
    Ok(())
}

fn user_line(password: &str) -> Vec<String> {
    let mut args: Vec<String> = ["ACL", "SETUSER"].map(String::from).to_vec();
    args.extend(USER.split(' ').map(String::from));
    args.push(format!(">{password}"));
    args
}

/// Calls on every key until each is refused (the outage has reached them all), checking
/// what the calls got against the policy.
fn outage(
    limiter: &SharedRateLimiter,
    keys: &[String],
    name: &str,
    policy: FailPolicy,
) -> TestResult {
    let started = Instant::now();
    let (mut refused, mut failed_open) = (0, 0);
    loop {
        let mut all = true;
        for key in keys {
            match limiter.try_acquire(key) {
                Ok(permit) if permit.failed_open().is_some() => failed_open += 1,
                Ok(_) => all = false,
                Err(SharedError::Unavailable { .. }) => refused += 1,
                Err(err) => return Err(format!("{name}: unexpected {err}").into()),
            }
        }
        if all {
            break;
        }
        assert!(
            started.elapsed() < RECOVERY_BOUND,
            "{name}: the outage never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    if policy == FailPolicy::Open {
        assert_eq!(refused, 0, "{name}");
        assert!(failed_open >= keys.len(), "{name}: {failed_open}");
    } else {
        assert_eq!(failed_open, 0, "{name}");
        assert!(refused >= keys.len(), "{name}: {refused}");
    }
    println!("{name}: while refused, {refused} calls refused and {failed_open} failed open");
    Ok(())
}

/// Calls every key every 10 ms until the server counts a permit on each, which must leave
/// `remaining`; the time it took is printed.
fn recovery(limiter: &SharedRateLimiter, keys: &[String], name: &str, remaining: u32, since: &str) {
    let started = Instant::now();
    let mut pending: Vec<&String> = keys.iter().collect();
    let mut counted = Vec::new();
    while !pending.is_empty() {
        pending.retain(|key| match limiter.try_acquire(key) {
            Ok(permit) => match permit.remaining() {
                Some(left) => {
                    counted.push(((*key).clone(), left));
                    false
                }
                None => true,
            },
            Err(_) => true,
        });
        assert!(
            started.elapsed() < RECOVERY_BOUND,
            "{name}: not deciding {RECOVERY_BOUND:?} after {since}: {pending:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    println!(
        "{name}: every key decided again {:?} after {since}",
        started.elapsed()
    );
    // What was refused or let through uncounted left no trace.
    for (key, left) in counted {
        assert_eq!(left, remaining, "{name}: {key}");
    }
}

#[test]
fn a_cluster_limiter_decides_again_after_its_user_is_restored_or_its_password_rotated() -> TestResult
{
    let cluster = RedisCluster::start()?;
    on_every_node(&cluster, &user_line("pw-1"))?;
    let client = |password: &str| {
        redis::cluster::ClusterClient::builder(cluster.urls())
            .username("limiter")
            .password(password)
            .build()
    };
    for (name, policy) in [("closed", FailPolicy::Closed), ("open", FailPolicy::Open)] {
        let config = Config::of(
            if policy == FailPolicy::Open {
                "open"
            } else {
                "closed"
            },
            LIMIT,
            Duration::from_secs(3600),
        )?
        .with_timeout(Duration::from_secs(1))?
        .with_fail_policy(policy);
        let limiter = SharedRateLimiter::connect_blocking(config, client("pw-1")?)?;
        let keys: Vec<String> = (0..KEYS).map(|n| format!("key-{n}")).collect();
        for key in &keys {
            assert_eq!(
                limiter.try_acquire(key)?.remaining(),
                Some(LIMIT - 1),
                "{key}"
            );
        }

        on_every_node(&cluster, &["ACL", "DELUSER", "limiter"])?;
        outage(&limiter, &keys, name, policy)?;
        on_every_node(&cluster, &user_line("pw-1"))?;
        recovery(&limiter, &keys, name, LIMIT - 2, "the user was restored");

        // The password rotated on every node and the connections dropped: refused until the
        // limiter is given a client with the new password.
        on_every_node(
            &cluster,
            &["ACL", "SETUSER", "limiter", "resetpass", ">pw-2"],
        )?;
        on_every_node(&cluster, &["CLIENT", "KILL", "USER", "limiter"])?;
        outage(&limiter, &keys, name, policy)?;
        limiter.set_client(client("pw-2")?)?;
        recovery(
            &limiter,
            &keys,
            name,
            LIMIT - 3,
            "the new password was given",
        );
        on_every_node(
            &cluster,
            &["ACL", "SETUSER", "limiter", "resetpass", ">pw-1"],
        )?;
    }
    Ok(())
}
