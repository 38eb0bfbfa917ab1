//! The shared limiter's lease decisions against the spec's rules: the share a lease call takes,
//! the latest local instant a share is spent at, and the under-admission bound, each the spec
//! crate's function (`fixed_window_spec::Lease`, `spend_deadline`) on any input, the extremes
//! included. The limiter's script takes its shares by the same rule; the simulator's oracle
//! checks every share it grants against the spec too.

use fixed_window::Instant;
use fixed_window_redis::{Lease, lease_deadline};
use fixed_window_spec::{Lease as Rule, spend_deadline};
use proptest::prelude::*;

/// Values near the ends of `u32` as often as anywhere else.
fn any_u32() -> impl Strategy<Value = u32> {
    prop_oneof![0..64u32, any::<u32>(), (u32::MAX - 64)..=u32::MAX]
}

/// Values near the ends of `u64` as often as anywhere else.
fn any_u64() -> impl Strategy<Value = u64> {
    prop_oneof![0..10_000u64, any::<u64>(), (u64::MAX - 10_000)..=u64::MAX]
}

/// The product's lease configuration and the spec's rule of the same largest share and
/// divisor (both at least 1).
fn leases() -> impl Strategy<Value = (Lease, Rule)> {
    (1..=u32::MAX, 1..=u32::MAX, 1..64u32, 1..16u32).prop_flat_map(|(max, div, small, sdiv)| {
        prop_oneof![Just((max, div)), Just((small, sdiv)), Just((max, sdiv))].prop_map(
            |(max, div)| {
                let lease = Lease::new(max)
                    .and_then(|lease| lease.with_divisor(div))
                    .expect("both positive");
                (lease, Rule::checked(max, div).expect("both positive"))
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_096))]

    #[test]
    fn the_limiter_takes_the_share_the_spec_gives(
        (lease, rule) in leases(),
        left in any_u32(),
        want in any_u32(),
    ) {
        prop_assert_eq!(lease.share(left, want), rule.share(left, want));
    }

    #[test]
    fn the_limiter_states_the_spec_s_under_admission_bound(
        (lease, rule) in leases(),
        processes in any_u32(),
        limit in 1..=u32::MAX,
    ) {
        prop_assert_eq!(lease.largest_share(limit), rule.largest_share(limit));
        prop_assert_eq!(
            lease.under_admission_bound(processes, limit),
            rule.under_admission_bound(processes, limit)
        );
    }

    #[test]
    fn the_limiter_spends_a_share_until_the_spec_s_deadline(
        sent in any_u64(),
        server_now in any_u64(),
        window_end in any_u64(),
    ) {
        // The server's readings are whole microseconds; the spec counts nanoseconds.
        let product = lease_deadline(Instant::from_nanos(sent), server_now, window_end)
            .map(|deadline| u128::from(deadline.as_nanos()));
        let spec = spend_deadline(
            u128::from(sent),
            u128::from(server_now) * 1_000,
            u128::from(window_end) * 1_000,
        );
        prop_assert_eq!(product, spec);
    }
}
