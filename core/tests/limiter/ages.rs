//! Windows at whole periods of Unix time in processes of every age: a limiter built soon
//! after its clock's timeline started, after the boundary before the build, ends its first
//! window on the same boundary as a limiter in an old process. Judged from wall time alone.

use core::time::Duration;

use fixed_window::{
    Clock, Instant, Interrupt, Interrupted, KeyedRateLimiter, ManualClock, Origin, RateLimiter,
    Sleep,
};
use proptest::prelude::*;

/// A manual clock whose timeline started at `born` nanoseconds of Unix time: a process of
/// that age.
#[derive(Clone)]
struct Process {
    clock: ManualClock,
    born: u64,
}

impl Process {
    /// A process born at Unix time `born` whose clock now reads `age`.
    fn new(born: u64, age: u64) -> Process {
        Process {
            clock: ManualClock::starting_at(Instant::from_nanos(age)),
            born,
        }
    }

    /// The Unix time now, in nanoseconds.
    fn wall(&self) -> u64 {
        self.born + self.clock.now().as_nanos()
    }
}

impl Clock for Process {
    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        self.clock.sleep(duration, interrupt)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        self.clock.sleep_async(duration)
    }

    fn unix_time(&self) -> Duration {
        Duration::from_nanos(self.wall())
    }
}

fn aligned(limit: u32, period: Duration, process: &Process) -> RateLimiter<Process> {
    RateLimiter::builder("ages", limit, period)
        .unwrap()
        .clock(process.clone())
        .origin(Origin::UnixEpoch)
        .build()
}

const SECOND: u64 = 1_000_000_000;

#[test]
fn a_limiter_built_half_a_second_into_a_second_of_a_young_process_retries_at_the_next_second() {
    // The process started 0.1 s ago, 0.407 s into a second of Unix time; the limiter is
    // built at .507 s.
    let process = Process::new(1_800_000_000 * SECOND + 407_000_000, 100_000_000);
    let limiter = aligned(1, Duration::from_secs(1), &process);
    assert!(limiter.try_acquire().is_ok());
    let rejection = limiter.try_acquire().unwrap_err();
    assert_eq!(rejection.retry_after(), Duration::from_millis(493));
    process.clock.advance(Duration::from_millis(493));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn an_hourly_limiter_built_at_five_to_eleven_retries_at_eleven() {
    // 10:54:55 on 2027-01-15, the process starts; its limiter is built 5 s later, at 10:55.
    let day = 1_800_000_000 / 86_400 * 86_400;
    let born = (day + 10 * 3_600 + 54 * 60 + 55) * SECOND;
    let process = Process::new(born, 5 * SECOND);
    let limiter = aligned(1, Duration::from_secs(3_600), &process);
    assert!(limiter.try_acquire().is_ok());
    let rejection = limiter.try_acquire().unwrap_err();
    assert_eq!(rejection.retry_after(), Duration::from_secs(5 * 60));
    // The same for a key of a keyed limiter.
    let keyed = KeyedRateLimiter::builder("ages", 1, Duration::from_secs(3_600))
        .unwrap()
        .clock(process.clone())
        .origin(Origin::UnixEpoch)
        .build();
    assert!(keyed.try_acquire(&"a").is_ok());
    let rejection = keyed.try_acquire(&"a").unwrap_err();
    assert_eq!(rejection.retry_after(), Some(Duration::from_secs(5 * 60)));
}

#[test]
fn a_chosen_boundary_after_the_reading_extends_the_grid_backwards() {
    // Boundaries every 100 ns through 1,000; built at 30: the first window is [0, 100).
    let clock = ManualClock::starting_at(Instant::from_nanos(30));
    let limiter = RateLimiter::builder("ages", 1, Duration::from_nanos(100))
        .unwrap()
        .clock(clock.clone())
        .origin(Origin::At(Instant::from_nanos(1_000)))
        .build();
    assert!(limiter.try_acquire().is_ok());
    assert_eq!(
        limiter.try_acquire().unwrap_err().retry_after(),
        Duration::from_nanos(70)
    );
    clock.set(Instant::from_nanos(950));
    assert!(limiter.try_acquire().is_ok());
    assert_eq!(
        limiter.try_acquire().unwrap_err().retry_after(),
        Duration::from_nanos(50)
    );
}

#[test]
fn the_manual_clock_aligns_to_its_own_unix_time_not_the_wall_clock() {
    // 40 s into a minute of Unix time by the manual clock; whatever the real time, the first
    // window of every limiter made on it ends 20 s later, and the keyed one's too.
    let clock = ManualClock::at_unix_time(Duration::from_secs(1_800_000_040));
    let minute = Duration::from_secs(60);
    let plain = RateLimiter::builder("manual-unix", 1, minute)
        .unwrap()
        .clock(clock.clone())
        .origin(Origin::UnixEpoch)
        .build();
    assert!(plain.try_acquire().is_ok());
    assert_eq!(
        plain.try_acquire().unwrap_err().retry_after(),
        Duration::from_secs(20)
    );
    // Time and Unix time move together: 5 s later a limiter made now ends on the same boundary.
    clock.advance(Duration::from_secs(5));
    assert_eq!(clock.unix_time(), Duration::from_secs(1_800_000_045));
    let keyed = KeyedRateLimiter::builder("manual-unix", 1, minute)
        .unwrap()
        .clock(clock.clone())
        .origin(Origin::UnixEpoch)
        .build();
    assert!(keyed.try_acquire(&"a").is_ok());
    assert_eq!(
        keyed.try_acquire(&"a").unwrap_err().retry_after(),
        Some(Duration::from_secs(15))
    );
    assert_eq!(
        plain.try_acquire().unwrap_err().retry_after(),
        Duration::from_secs(15)
    );
    // And backwards: setting the clock back sets its Unix time back as far.
    clock.set(Instant::from_nanos(1_000_000_000));
    assert_eq!(clock.unix_time(), Duration::from_secs(1_800_000_041));
    // A plain manual clock's zero reading is the epoch itself: windows on the creation grid.
    let epoch = ManualClock::starting_at(Instant::from_nanos(7 * SECOND));
    assert_eq!(epoch.unix_time(), Duration::from_secs(7));
    let aligned = RateLimiter::builder("manual-unix", 1, Duration::from_secs(10))
        .unwrap()
        .clock(epoch)
        .origin(Origin::UnixEpoch)
        .build();
    assert!(aligned.try_acquire().is_ok());
    assert_eq!(
        aligned.try_acquire().unwrap_err().retry_after(),
        Duration::from_secs(3)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Two processes of different ages, each building its limiter at a moment of its own, see
    /// the same windows: at every step of wall time, a limit-1 limiter grants exactly when the
    /// step is the first in its window of Unix time `[k·period, (k+1)·period)`, and a rejection
    /// retries at that window's end.
    #[test]
    fn processes_of_every_age_agree_on_every_boundary(
        period in prop_oneof![1..50u64, 50..5_000u64, Just(SECOND)],
        wall in 1_000_000u64..1_000_000_000_000,
        ages in (0..3u64, 0..3u64, 0..20_000u64, 0..20_000u64),
        steps in proptest::collection::vec(0..3_000u64, 1..40),
    ) {
        // An age of zero, one just below or above the offset into the period, or any.
        let into = wall % period;
        let age = |kind: u64, any: u64| match kind {
            0 => 0,
            1 => into.saturating_sub(1).min(wall),
            _ => (into + 1 + any).min(wall),
        };
        let processes = [age(ages.0, ages.2), age(ages.1, ages.3)]
            .map(|age| Process::new(wall - age, age));
        let limiters = processes.clone().map(|process| aligned(1, Duration::from_nanos(period), &process));
        let mut last_granted = None;
        for step in steps {
            for process in &processes {
                process.clock.advance(Duration::from_nanos(step));
            }
            let now = processes[0].wall();
            let window = now / period;
            let first = last_granted != Some(window);
            last_granted = Some(window);
            for (limiter, process) in limiters.iter().zip(&processes) {
                prop_assert_eq!(process.wall(), now);
                match limiter.try_acquire() {
                    Ok(_) => prop_assert!(first, "a second permit in window {} at {}", window, now),
                    Err(rejection) => {
                        prop_assert!(!first, "no permit in a new window {} at {}", window, now);
                        let end = (window + 1) * period;
                        prop_assert_eq!(rejection.retry_after(), Duration::from_nanos(end - now));
                    }
                }
            }
        }
    }
}
