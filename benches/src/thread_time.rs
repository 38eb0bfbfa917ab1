//! Timing a single-threaded benchmark by the CPU time its thread used.

use std::time::Duration;

use cpu_time::ThreadTime;

/// Runs `run` and returns the CPU time the calling thread spent in it.
///
/// The machines these benchmarks run on are shared and often oversubscribed; wall time then
/// includes the stretches in which the benchmark thread was descheduled, which inflates and
/// scatters every figure by however busy the machine happened to be. The thread's CPU time
/// counts only the time it ran, so single-threaded figures taken minutes apart stay comparable.
/// (Contention benchmarks keep wall time: there, waiting for the other threads is the cost.)
///
/// # Panics
///
/// If the operating system cannot report the thread's CPU time.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let spent = fixed_window_benches::on_cpu(|| {
///     std::thread::sleep(Duration::from_millis(20));
/// });
/// // Sleeping uses no CPU.
/// assert!(spent < Duration::from_millis(20));
/// ```
pub fn on_cpu(run: impl FnOnce()) -> Duration {
    let start = ThreadTime::now();
    run();
    start.elapsed()
}
