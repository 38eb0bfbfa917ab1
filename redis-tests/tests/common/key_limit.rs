//! The checks of limits per key, shared by the one-node and the cluster tests
//! (`tests/shared/key_limit.rs`, `tests/cluster/key_limit.rs`): a key decided by its own limit
//! in every process, and a process that decides a key by another limit refused with
//! `SharedError::Conflict` on that key, never a permit, under every fail policy, counting
//! nothing.

use core::num::NonZeroU32;
use core::time::Duration;

use fixed_window::RateLimiterError;
use fixed_window_redis::{Config, FailPolicy, Server, SharedError, SharedRateLimiter};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// No window boundary falls inside the test.
const HOUR: Duration = Duration::from_secs(3600);

/// Two processes that give `paid` 5 and `gold-*` 7 (a map and a rule) and every other key 2
/// share each key's count by its own limit; a weight above the default fits a key's own.
pub fn keys_are_counted_by_their_own_limits(server: &dyn Fn() -> Server) -> TestResult {
    let config = Config::of("own-limits", 2, HOUR)?
        .with_timeout(Duration::from_secs(2))?
        .key_limit("paid", 5)?
        .key_limits(|key| key.starts_with("gold-").then_some(NonZeroU32::new(7)?));
    let a = SharedRateLimiter::connect_blocking(config.clone(), server())?;
    let b = SharedRateLimiter::connect_blocking(config, server())?;
    assert_eq!(
        (
            a.key_limit("paid"),
            a.key_limit("gold-1"),
            a.key_limit("free")
        ),
        (5, 7, 2)
    );
    for (key, limit) in [("paid", 5), ("gold-1", 7), ("free", 2)] {
        for taken in 1..=limit {
            let limiter = if taken % 2 == 0 { &a } else { &b };
            let permit = limiter.try_acquire(key)?;
            assert_eq!(
                permit.remaining(),
                Some(limit - taken),
                "{key}: permit {taken}"
            );
        }
        for limiter in [&a, &b] {
            let rejected = limiter.try_acquire(key);
            assert!(
                matches!(
                    &rejected,
                    Err(SharedError::Limited(RateLimiterError::Rejected { .. }))
                ),
                "{key}: past its limit: {rejected:?}"
            );
            let peek = limiter.peek(key)?;
            assert_eq!((peek.remaining(), peek.limit()), (0, limit), "{key}");
        }
    }
    // A weight of 4 is more than the default's window holds, not more than paid-2's.
    let weighted = a.try_acquire_n("gold-2", 4)?;
    assert_eq!(weighted.remaining(), Some(3));
    let too_many = a.try_acquire_n("free-2", 4);
    assert!(
        matches!(
            too_many,
            Err(SharedError::Limited(RateLimiterError::TooMany {
                limit: 2,
                ..
            }))
        ),
        "{too_many:?}"
    );
    let peek = b.peek("gold-3")?;
    assert_eq!((peek.remaining(), peek.limit()), (7, 7));
    Ok(())
}

/// A process that decides a key by another limit than the one its counter was written under
/// (no limit of its own against one, or another one) gets `Conflict` on that key, under every
/// fail policy, and counts nothing; its other keys are decided as before.
pub fn a_key_decided_by_another_limit_is_a_conflict(server: &dyn Fn() -> Server) -> TestResult {
    let base = Config::of("disagree", 4, HOUR)?.with_timeout(Duration::from_secs(2))?;
    let own = SharedRateLimiter::connect_blocking(
        base.clone().key_limit("paid", 6)?.key_limit("vip", 9)?,
        server(),
    )?;
    assert_eq!(own.try_acquire("paid")?.remaining(), Some(5));
    let plain = SharedRateLimiter::connect_blocking(base.clone(), server())?;
    // The other way round: counted first by the limiter's limit.
    assert_eq!(plain.try_acquire("vip")?.remaining(), Some(3));
    let local = FailPolicy::Local { share: 4 };
    for policy in [FailPolicy::Closed, FailPolicy::Open, local] {
        let others = [
            ("none", base.clone()),
            (
                "another",
                base.clone().key_limit("paid", 7)?.key_limit("vip", 4)?,
            ),
        ];
        for (how, config) in others {
            let config = config.with_fail_policy(policy);
            let other = SharedRateLimiter::connect_blocking(config, server())?;
            let result = other.try_acquire("paid");
            let expected = (other.key_limit("paid"), 6_u64);
            assert!(
                matches!(result, Err(SharedError::Conflict(c)) if (c.limit, c.stored_limit) == expected),
                "{policy:?}, {how} own limit: {result:?}"
            );
            let peeked = other.peek("paid");
            assert!(
                matches!(peeked, Err(SharedError::Conflict(_))),
                "{policy:?}: {peeked:?}"
            );
            let drained = other.drain("paid");
            assert!(
                matches!(drained, Err(SharedError::Conflict(_))),
                "{policy:?}: {drained:?}"
            );
            // Its other keys are its own business.
            assert!(other.try_acquire(&format!("{how}-{policy:?}")).is_ok());
        }
        // A limit of its own for a key counted by the limiter's.
        let config = base.clone().key_limit("vip", 9)?.with_fail_policy(policy);
        let other = SharedRateLimiter::connect_blocking(config, server())?;
        let result = other.try_acquire_n("vip", 2);
        assert!(
            matches!(result, Err(SharedError::Conflict(c)) if (c.limit, c.stored_limit) == (9, 4)),
            "{policy:?}: {result:?}"
        );
    }
    // Nothing was counted by the refused calls.
    assert_eq!(own.try_acquire("paid")?.remaining(), Some(4));
    assert_eq!(plain.try_acquire("vip")?.remaining(), Some(2));
    Ok(())
}
