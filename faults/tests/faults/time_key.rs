//! The server's clock under the test's control: a keeper thread writes the time into the
//! script's time key (`KEYS[3]`) every few hundred microseconds, and steps it forward or back
//! on request. The history's timeline is the host's real-time clock (the time the key would
//! hold without steps); every reading the script takes is a value the keeper wrote.
//!
//! An attempt's invocation is the timeline instant of the last write the keeper finished
//! before the attempt was sent, and its return the instant of the last write it began before
//! the reply came: the write the script read lies between. A step is placed between the last
//! write with the old offset and the first with the new one.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fixed_window_models::shared::Step;

use crate::clock::server_now;
use crate::run::Error;

/// The key the script reads the time from.
pub const TIME_KEY: &str = "test:faults:time";

/// How often the keeper writes the time.
const EVERY: Duration = Duration::from_micros(200);

#[derive(Default)]
struct State {
    /// The timeline instant of the last write finished.
    finished: AtomicU64,
    /// The timeline instant of the last write begun.
    begun: AtomicU64,
    /// A step asked for and not yet written, in microseconds.
    pending: AtomicI64,
    steps: Mutex<Vec<Step>>,
    stop: AtomicBool,
    /// Readings are whole multiples of this many microseconds from the first one.
    grain: u64,
    /// The first reading.
    base: AtomicU64,
}

/// The keeper, writing until dropped.
pub struct TimeKeeper {
    state: Arc<State>,
    thread: Mutex<Option<std::thread::JoinHandle<Result<(), String>>>>,
}

impl TimeKeeper {
    /// Starts writing the time into [`TIME_KEY`] on the server at `port`, in whole `grain`s
    /// from the first reading (so that, with a grain dividing the period, readings fall on
    /// window boundaries often), and returns once the first write is done.
    pub fn start(port: u16, grain: Duration) -> Result<TimeKeeper, Error> {
        let mut connection =
            redis::Client::open(format!("redis://127.0.0.1:{port}/"))?.get_connection()?;
        let now = server_now();
        let state = Arc::new(State {
            grain: u64::try_from(grain.as_micros())?.max(1),
            base: AtomicU64::new(now),
            ..State::default()
        });
        write(&mut connection, &state, 0, now)?;
        let keeper = Arc::clone(&state);
        let thread = std::thread::spawn(move || keep(&mut connection, &keeper));
        Ok(TimeKeeper {
            state,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// A lower bound of the reading the script takes for a request sent after this call.
    pub fn invoked(&self) -> u64 {
        self.state.finished.load(Ordering::SeqCst)
    }

    /// An upper bound of the reading the script took for a reply received before this call.
    pub fn returned(&self) -> u64 {
        self.state.begun.load(Ordering::SeqCst)
    }

    /// Steps the server's clock by `delta` microseconds from the next write on.
    pub fn step(&self, delta: i64) {
        self.state.pending.fetch_add(delta, Ordering::SeqCst);
    }

    /// Stops the keeper; the steps it made.
    pub fn finish(&self) -> Result<Vec<Step>, Error> {
        self.stop()?;
        let steps = self
            .state
            .steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(steps.clone())
    }

    fn stop(&self) -> Result<(), Error> {
        self.state.stop.store(true, Ordering::SeqCst);
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            thread
                .join()
                .map_err(|_| "the time keeper panicked")?
                .map_err(Error::from)?;
        }
        Ok(())
    }
}

impl Drop for TimeKeeper {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn keep(connection: &mut redis::Connection, state: &State) -> Result<(), String> {
    let mut offset: i64 = 0;
    while !state.stop.load(Ordering::SeqCst) {
        std::thread::sleep(EVERY);
        let delta = state.pending.swap(0, Ordering::SeqCst);
        let base = state.base.load(Ordering::SeqCst);
        let now = server_now().max(base);
        let now = now - (now - base) % state.grain;
        if delta != 0 {
            offset += delta;
            let from = state.finished.load(Ordering::SeqCst);
            state
                .steps
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Step {
                    from,
                    to: now,
                    delta,
                });
        }
        write(connection, state, offset, now).map_err(|err| err.to_string())?;
    }
    Ok(())
}

/// Writes timeline instant `now` moved by `offset` into the key.
fn write(
    connection: &mut redis::Connection,
    state: &State,
    offset: i64,
    now: u64,
) -> Result<(), Error> {
    state.begun.store(now, Ordering::SeqCst);
    let reading = u64::try_from(i128::from(now) + i128::from(offset))?;
    redis::cmd("SET")
        .arg(TIME_KEY)
        .arg(reading)
        .exec(connection)?;
    state.finished.store(now, Ordering::SeqCst);
    Ok(())
}
