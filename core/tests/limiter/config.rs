//! Configuration: validation with errors naming the field, getters, traits.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fixed_window::{
    Backoff, Builder, Clock, ConfigError, Instant, Interrupt, Interrupted, KeyedBuilder,
    KeyedRateLimiter, ManualClock, RateLimiter, RateLimiterError, RateLimiterEvent, Settings,
    Sleep, SystemClock,
};

#[test]
fn a_zero_limit_is_an_error_naming_limit() {
    let err = RateLimiter::of("api", 0, Duration::from_secs(1)).unwrap_err();
    assert_eq!(err, ConfigError::ZeroLimit);
    assert!(err.to_string().contains("limit"));
}

#[test]
fn a_zero_period_is_an_error_naming_period() {
    let err = RateLimiter::of("api", 1, Duration::ZERO).unwrap_err();
    assert_eq!(err, ConfigError::ZeroPeriod);
    assert!(err.to_string().contains("period"));
}

#[test]
fn withers_validate_like_the_constructor() {
    let limiter = RateLimiter::of("api", 1, Duration::from_secs(1)).unwrap();
    let limiter = limiter.with_limit(0).map(drop).unwrap_err();
    assert_eq!(limiter, ConfigError::ZeroLimit);
    let limiter = RateLimiter::of("api", 1, Duration::from_secs(1)).unwrap();
    assert_eq!(
        limiter.with_period(Duration::ZERO).map(drop).unwrap_err(),
        ConfigError::ZeroPeriod
    );
}

#[test]
fn every_setting_reads_back() {
    let limiter = RateLimiter::of("api", 10, Duration::from_secs(1))
        .unwrap()
        .with_limit(20)
        .unwrap()
        .with_period(Duration::from_millis(500))
        .unwrap()
        .with_max_wait(Duration::from_secs(3))
        .with_backoff(Backoff::new(2))
        .with_clock(ManualClock::new());
    assert_eq!(limiter.name(), "api");
    assert_eq!(limiter.limit(), 20);
    assert_eq!(limiter.period(), Duration::from_millis(500));
    assert_eq!(limiter.max_wait(), Duration::from_secs(3));
    assert_eq!(limiter.backoff(), Backoff::new(2));
}

#[test]
fn debug_output_names_the_limiter_and_its_state() {
    let limiter = RateLimiter::of("debugged", 4, Duration::from_secs(1)).unwrap();
    let text = format!("{limiter:?}");
    assert!(text.contains("debugged"), "{text}");
    assert!(text.contains("used: 0"), "{text}");
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn public_types_are_send_and_sync() {
    assert_send_sync::<RateLimiter>();
    assert_send_sync::<RateLimiter<ManualClock>>();
    assert_send_sync::<RateLimiter<Arc<SystemClock>>>();
    assert_send_sync::<RateLimiterError>();
    assert_send_sync::<RateLimiterEvent>();
    assert_send_sync::<ConfigError>();
}

#[test]
fn errors_are_standard_errors() {
    let errors: Vec<Box<dyn std::error::Error + Send + Sync>> = vec![
        Box::new(ConfigError::ZeroLimit),
        Box::new(RateLimiterError::Interrupted { name: "api" }),
    ];
    assert!(errors.iter().all(|err| !err.to_string().is_empty()));
}

/// A manual clock that counts its readings.
#[derive(Debug, Clone, Default)]
struct CountingClock {
    inner: ManualClock,
    reads: Arc<AtomicU32>,
}

impl Clock for CountingClock {
    fn now(&self) -> Instant {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        self.inner.sleep(duration, interrupt)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        self.inner.sleep_async(duration)
    }
}

#[test]
fn the_builder_reads_its_clock_once_when_it_builds() {
    let clock = CountingClock::default();
    let builder = RateLimiter::builder("api", 2, Duration::from_secs(1))
        .unwrap()
        .max_wait(Duration::from_secs(1))
        .clock(clock.clone())
        .listener(|_| {})
        .backoff(Backoff::new(1));
    assert_eq!(clock.reads.load(Ordering::SeqCst), 0);
    let limiter = builder.build();
    assert_eq!(clock.reads.load(Ordering::SeqCst), 1);
    assert_eq!(limiter.max_wait(), Duration::from_secs(1));
    assert_eq!(limiter.backoff(), Backoff::new(1));
}

#[test]
fn the_builder_validates_like_the_constructor() {
    let err = RateLimiter::builder("api", 0, Duration::from_secs(1)).unwrap_err();
    assert_eq!(err, ConfigError::ZeroLimit);
    let err = RateLimiter::builder("api", 1, Duration::ZERO).unwrap_err();
    assert_eq!(err, ConfigError::ZeroPeriod);
}

#[test]
fn the_first_window_starts_when_the_limiter_is_built() {
    let clock = ManualClock::new();
    let builder = RateLimiter::builder("api", 1, Duration::from_nanos(100))
        .unwrap()
        .clock(clock.clone());
    clock.set(Instant::from_nanos(150));
    let limiter = builder.build();
    assert!(limiter.try_acquire().is_ok());
    clock.set(Instant::from_nanos(249));
    assert!(limiter.try_acquire().is_err());
    clock.set(Instant::from_nanos(250));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn a_builder_prints_its_settings() {
    let builder = RateLimiter::builder("printed", 3, Duration::from_secs(1)).unwrap();
    let text = format!("{builder:?}");
    assert!(
        text.contains("printed") && text.contains("limit: 3"),
        "{text}"
    );
}

#[test]
fn one_settings_value_configures_both_limiters_alike() {
    let settings = Settings::new("shared", 2, Duration::from_secs(1))
        .unwrap()
        .with_max_wait(Duration::from_millis(3));
    let plain = Builder::from(settings).clock(ManualClock::new()).build();
    let keyed: KeyedRateLimiter<u64, ManualClock> = KeyedBuilder::from(settings)
        .clock(ManualClock::new())
        .build();
    let expected = (
        settings.name(),
        settings.limit(),
        settings.period(),
        settings.max_wait(),
    );
    let plain_reads = (
        plain.name(),
        plain.limit(),
        plain.period(),
        plain.max_wait(),
    );
    let keyed_reads = (
        keyed.name(),
        keyed.limit(),
        keyed.period(),
        keyed.max_wait(),
    );
    assert_eq!(plain_reads, expected);
    assert_eq!(keyed_reads, expected);
}

#[test]
fn both_builders_refuse_a_change_the_rules_forbid_as_settings_do() {
    let settings = Settings::new("api", 1, Duration::from_secs(1)).unwrap();
    assert_eq!(
        Builder::from(settings).limit(0).map(drop),
        Err(ConfigError::ZeroLimit)
    );
    assert_eq!(
        KeyedBuilder::<u64>::from(settings)
            .period(Duration::ZERO)
            .map(drop),
        Err(ConfigError::ZeroPeriod)
    );
    assert_eq!(settings.with_limit(0), Err(ConfigError::ZeroLimit));
}
