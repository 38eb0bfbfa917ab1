//! Credentials that stop working and work again: the limiter's ACL user deleted and restored,
//! its password rotated, a restart without persistence that comes back without the user for
//! 2 s. Under either policy the limiter keeps calling while refused (fail closed: each call
//! `Unavailable`; fail open: each a flagged permit nobody counted), and decides again by
//! itself, without a restart, once the credentials work: the test measures how long after,
//! asserts only a generous bound (5 s), and checks that the server's count is exact again.

use core::time::Duration;
use std::time::Instant;

use fixed_window_redis::{
    Config, FailPolicy, SharedError, SharedRateLimiter, UnavailableKind, redis,
};
use fixed_window_redis_test::{RedisServer, ServerOptions};

use crate::support::{HOUR, TestResult};

/// The limiter's user, with the least it needs (the line redis/README.md gives), and a
/// password.
fn limiter_user(password: &str) -> String {
    format!(
        "limiter on >{password} resetkeys ~fixed-window:* resetchannels -@all +evalsha +script|load +time +get +set"
    )
}

/// Far more than a recovery takes (well under a second where measured): a bound that cannot
/// flake, not a speed.
const RECOVERY_BOUND: Duration = Duration::from_secs(5);

/// The limit: never reached by the test's permits.
const LIMIT: u32 = 1_000;

/// A server whose default user has a password (the admin), and the limiter's user made by a
/// command (so that a restart without persistence loses it).
fn server() -> Result<(RedisServer, redis::Connection), Box<dyn std::error::Error>> {
    let server = RedisServer::start_with(&ServerOptions::new().with_password("admin"))?;
    let mut admin = server.client()?.get_connection()?;
    set_user(&mut admin, "pw-1")?;
    Ok((server, admin))
}

fn set_user(admin: &mut redis::Connection, password: &str) -> TestResult {
    let line = limiter_user(password);
    redis::cmd("ACL")
        .arg("SETUSER")
        .arg(line.split(' ').collect::<Vec<_>>())
        .exec(admin)?;
    Ok(())
}

fn config(name: &'static str, policy: FailPolicy) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, LIMIT, HOUR)?
        .with_timeout(Duration::from_secs(1))?
        .with_fail_policy(policy))
}

/// What the calls made while the credentials did not work got.
#[derive(Debug, Default)]
struct Refused {
    /// Fail-closed calls refused as access denied.
    denied: u32,
    /// Fail-closed calls refused otherwise (the dropped connection, a restarting server).
    other: u32,
    /// Fail-open permits, none counted.
    failed_open: u32,
}

/// Calls `limiter` on `key` until none is counted (the outage has reached it) and then
/// `calls` times more, and on until `until`, recording what each got; a counted permit once
/// the outage was seen is an error.
fn refused_calls(
    limiter: &SharedRateLimiter,
    key: &str,
    calls: u32,
    until: Instant,
) -> Result<Refused, String> {
    let mut refused = Refused::default();
    let mut seen = false;
    let started = Instant::now();
    let mut made = 0;
    while made < calls || Instant::now() < until {
        match limiter.try_acquire(key) {
            Ok(permit) if permit.failed_open().is_some() => {
                seen = true;
                refused.failed_open += 1;
            }
            Ok(permit) if seen => {
                return Err(format!("a counted permit while refused: {permit:?}"));
            }
            // Before the outage reached this limiter's connection: spent here, but counted.
            Ok(_) => {}
            Err(SharedError::Unavailable { cause, .. }) => {
                seen = true;
                if cause.kind() == UnavailableKind::Denied {
                    refused.denied += 1;
                } else {
                    refused.other += 1;
                }
            }
            Err(err) => return Err(format!("unexpected: {err}")),
        }
        if seen {
            made += 1;
        }
        if !seen && started.elapsed() > RECOVERY_BOUND {
            return Err(format!("the outage never reached the limiter: {refused:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(refused)
}

/// Calls `limiter` on `key` every 10 ms from now until the server counts a permit: that
/// permit's `remaining`, and how long it took.
fn recovery(limiter: &SharedRateLimiter, key: &str) -> Result<(u32, Duration), String> {
    let started = Instant::now();
    loop {
        match limiter.try_acquire(key) {
            Ok(permit) => {
                if let Some(remaining) = permit.remaining() {
                    return Ok((remaining, started.elapsed()));
                }
            }
            Err(SharedError::Unavailable { .. }) => {}
            Err(err) => return Err(format!("unexpected: {err}")),
        }
        if started.elapsed() > RECOVERY_BOUND {
            return Err(format!(
                "not deciding {RECOVERY_BOUND:?} after the credentials work again: {:?}",
                limiter.try_acquire(key)
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the calls during the outage got, checked against the policy.
fn check_refused(policy: FailPolicy, refused: &Refused) {
    if policy == FailPolicy::Closed {
        assert_eq!(refused.failed_open, 0, "{refused:?}");
        assert!(refused.denied > 0, "no call was denied: {refused:?}");
    } else {
        assert_eq!(refused.denied + refused.other, 0, "{refused:?}");
        assert!(refused.failed_open > 0, "{refused:?}");
    }
}

fn policies() -> [(&'static str, FailPolicy); 2] {
    [("closed", FailPolicy::Closed), ("open", FailPolicy::Open)]
}

/// Deletes the user under a registered limiter (the server drops its connection; the
/// reconnection is refused), then creates it again.
#[test]
fn a_limiter_whose_acl_user_is_deleted_and_restored_decides_again_with_an_exact_count() -> TestResult
{
    for (name, policy) in policies() {
        let (server, mut admin) = server()?;
        let limiter = SharedRateLimiter::connect_blocking(
            config("deleted", policy)?,
            server.client_as("limiter", "pw-1")?,
        )?;
        for used in 1..=5 {
            assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - used));
        }
        redis::cmd("ACL")
            .arg("DELUSER")
            .arg("limiter")
            .exec(&mut admin)?;
        let refused = refused_calls(&limiter, "k", 10, Instant::now())?;
        check_refused(policy, &refused);
        set_user(&mut admin, "pw-1")?;
        let (remaining, took) = recovery(&limiter, "k")?;
        println!("{name}: user restored, deciding again after {took:?}; while refused {refused:?}");
        // Nothing the outage let through was counted, nothing counted was lost.
        assert_eq!(remaining, LIMIT - 6, "{name}");
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - 7));
    }
    Ok(())
}

/// The password rotated and the old connection dropped: refused until the application gives
/// the limiter a client with the new password, then deciding again at once.
#[test]
fn a_rotated_password_given_to_a_running_limiter_ends_the_refusal() -> TestResult {
    for (name, policy) in policies() {
        let (server, mut admin) = server()?;
        let limiter = SharedRateLimiter::connect_blocking(
            config("rotated", policy)?,
            server.client_as("limiter", "pw-1")?,
        )?;
        for used in 1..=3 {
            assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - used));
        }
        // A live connection keeps working after a password change; the next reconnection
        // is refused.
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg("limiter")
            .arg("resetpass")
            .arg(">pw-2")
            .exec(&mut admin)?;
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("USER")
            .arg("limiter")
            .exec(&mut admin)?;
        let refused = refused_calls(&limiter, "k", 10, Instant::now())?;
        check_refused(policy, &refused);
        limiter.set_client(server.client_as("limiter", "pw-2")?)?;
        let (remaining, took) = recovery(&limiter, "k")?;
        println!(
            "{name}: new password given, deciding again after {took:?}; while refused {refused:?}"
        );
        assert_eq!(remaining, LIMIT - 4, "{name}");

        // Given before the old password stops working, the rotation costs no call.
        let rotated = SharedRateLimiter::connect_blocking(
            config("rotated-early", policy)?,
            server.client_as("limiter", "pw-2")?,
        )?;
        assert_eq!(rotated.try_acquire("k")?.remaining(), Some(LIMIT - 1));
        rotated.set_client(server.client_as("limiter", "pw-3")?)?;
        // The new client is refused until the password is changed to it.
        let cause = match rotated.try_acquire("k") {
            Ok(permit) => permit.failed_open().cloned(),
            Err(err) => err.unavailable().cloned(),
        };
        assert_eq!(
            cause.as_ref().map(fixed_window_redis::Unavailable::kind),
            Some(UnavailableKind::Denied),
            "{cause:?}"
        );
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg("limiter")
            .arg("resetpass")
            .arg(">pw-3")
            .exec(&mut admin)?;
        let (remaining, _) = recovery(&rotated, "k")?;
        assert_eq!(remaining, LIMIT - 2, "{name}");
    }
    Ok(())
}

/// The server restarts without persistence and its user is provisioned 2 s later: refused
/// meanwhile, then counting from an empty keyspace.
#[test]
fn a_restart_that_provisions_the_user_late_is_recovered_from() -> TestResult {
    for (name, policy) in policies() {
        let (mut server, _) = server()?;
        let limiter = SharedRateLimiter::connect_blocking(
            config("restarted", policy)?,
            server.client_as("limiter", "pw-1")?,
        )?;
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - 1));
        server.restart()?;
        let provisioned_at = Instant::now() + Duration::from_secs(2);
        // Calls all along: the renewals' back-off has grown to its longest.
        let refused = refused_calls(&limiter, "k", 5, provisioned_at)?;
        let mut admin = server.client()?.get_connection()?;
        set_user(&mut admin, "pw-1")?;
        let (remaining, took) = recovery(&limiter, "k")?;
        println!(
            "{name}: user provisioned after the restart, deciding again after {took:?}; while refused {refused:?}"
        );
        check_refused(policy, &refused);
        // The server lost every count: this permit is the window's first.
        assert_eq!(remaining, LIMIT - 1, "{name}");
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - 2));
    }
    Ok(())
}

/// A TLS handshake refused (a client that does not trust the server's certificate, given to a
/// connected limiter) is a refusal as the others: the limiter decides again once it is given a
/// client that trusts the server.
#[test]
fn a_refused_tls_handshake_is_recovered_from_with_a_trusting_client() -> TestResult {
    for (name, policy) in policies() {
        let server = RedisServer::start_with(&ServerOptions::new().with_tls())?;
        let limiter =
            SharedRateLimiter::connect_blocking(config("tls", policy)?, server.client()?)?;
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - 1));
        // The system's authorities do not know the test's.
        limiter.set_client(redis::Client::open(server.url())?)?;
        let refused = refused_calls(&limiter, "k", 5, Instant::now())?;
        check_refused(policy, &refused);
        limiter.set_client(server.client()?)?;
        let (remaining, took) = recovery(&limiter, "k")?;
        println!(
            "{name}: a trusting client given, deciding again after {took:?}; while refused {refused:?}"
        );
        assert_eq!(remaining, LIMIT - 2, "{name}");
    }
    Ok(())
}
