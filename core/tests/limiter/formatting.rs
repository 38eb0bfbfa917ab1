//! What the types print: `Debug` shows the state a person debugging needs, `Display` reads as
//! a sentence.

use core::time::Duration;

use fixed_window::{Instant, Interrupt, ManualClock, RateLimiter};

use crate::support::{at, limiter};

#[test]
fn a_limiter_prints_its_current_window_and_used_count() {
    let (limiter, clock) = limiter(3, 100, 1_000);
    clock.set(at(1_250));
    limiter.try_acquire().unwrap();
    limiter.try_acquire().unwrap();
    let text = format!("{limiter:?}");
    assert!(text.contains("window_start: Instant(1200ns)"), "{text}");
    assert!(text.contains("used: 2"), "{text}");
    assert!(text.contains("window: 2"), "{text}");
    assert!(text.contains("packed u64"), "{text}");
    // The budget the claims are decided by: its grid and limit.
    assert!(text.contains("budget: Budget { grid: "), "{text}");
    assert!(text.contains("limit: 3, backoff: "), "{text}");
}

#[test]
fn a_limiter_on_the_wide_word_prints_its_state_too() {
    let limiter = RateLimiter::of("wide", 2, Duration::from_nanos(1))
        .unwrap()
        .with_clock(ManualClock::starting_at(at(40)));
    limiter.try_acquire().unwrap();
    let text = format!("{limiter:?}");
    assert!(text.contains("wide u128"), "{text}");
    assert!(text.contains("window_start: Instant(40ns)"), "{text}");
    assert!(text.contains("used: 1"), "{text}");
}

#[test]
fn instants_print_in_nanoseconds() {
    assert_eq!(format!("{:?}", at(12)), "Instant(12ns)");
    assert_eq!(at(12).to_string(), "12ns");
    assert_eq!(Instant::MAX.to_string(), format!("{}ns", u64::MAX));
}

#[test]
fn a_manual_clock_prints_its_reading_and_unix_time() {
    let clock = ManualClock::starting_at(at(77));
    assert_eq!(
        format!("{clock:?}"),
        "ManualClock { now: Instant(77ns), unix_at_zero: 0ns }"
    );
    let clock = ManualClock::at_unix_time(Duration::from_secs(5));
    assert_eq!(
        format!("{clock:?}"),
        "ManualClock { now: Instant(0ns), unix_at_zero: 5s }"
    );
}

#[test]
fn an_interrupt_prints_its_flag() {
    let interrupt = Interrupt::new();
    assert_eq!(format!("{interrupt:?}"), "Interrupt { interrupted: false }");
    interrupt.interrupt();
    assert_eq!(format!("{interrupt:?}"), "Interrupt { interrupted: true }");
}

#[test]
fn a_rejection_reads_as_a_sentence_naming_the_limiter() {
    let (limiter, _) = limiter(1, 100, 0);
    limiter.try_acquire().unwrap();
    let text = limiter.try_acquire().unwrap_err().to_string();
    assert!(text.contains("'test'"), "{text}");
    assert!(text.contains("1 permits per 100ns"), "{text}");
}
