//! The simulation world: everything the simulated calls reach while a run drives them, in one
//! place.
//!
//! A run's event loop ([`simulation`](crate::simulation)) owns the scenario, the subject and
//! the callers' futures and coroutines, and calls into the subject. The subject, in turn,
//! reaches the simulator only through what it was given: its clock (`now`, `sleep`,
//! `sleep_async`), its listeners and the operations. What those read and write is the
//! [`World`]: virtual time and the clock's reading, the caller whose turn it is, the timers
//! its sleeps register, how a woken asynchronous sleep ended, and the trace; and, kept from
//! run to run, the coroutines that wait for blocking calls. The subject itself is not in the
//! world: the loop is generic over it, and nothing but the loop calls it.
//!
//! # Why a thread-local
//!
//! The world lives in the simulator's one thread-local, one per thread. The clock, the
//! listeners and the operations are values the limiter holds and calls with nothing of the
//! simulator's: the limiter requires them to be `Send + Sync`, and a blocking call reaches the
//! clock from its own coroutine's stack, where nothing could be passed down. Every one of
//! those calls runs on the thread that runs the scenario (a coroutine is resumed on the
//! simulator's thread, one at a time), so the thread's world is the run's, reached without a
//! lock or an atomic. The coroutines stay in the world between runs because a coroutine's
//! stack costs microseconds to make, more than a small scenario takes to run.

use core::cell::{Cell, RefCell};
use core::time::Duration;

use fixed_window::Interrupted;

use crate::coroutine::Pool;
use crate::record::Record;

thread_local! {
    /// This thread's world.
    static WORLD: World = const { World::new() };
}

/// The most records reserved for a trace at once: enough for every run of a sweep but those
/// that use up most of their event budget.
const MOST_RESERVED: usize = 1 << 16;

/// A sleep waiting for the simulator to fire it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timer {
    /// The sleeping caller.
    pub(crate) owner: u32,
    /// Virtual time at which it wakes.
    pub(crate) wake: u64,
    /// Its id: timers are numbered in order of registration.
    pub(crate) id: usize,
}

/// A point of the run: virtual time and the clock's reading then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Moment {
    /// Virtual time, in nanoseconds: what orders events.
    pub(crate) time: u64,
    /// What the clock reads at `time`, in nanoseconds: what the limiter sees.
    pub(crate) reading: u64,
}

/// The state of the simulation on one thread. Between runs it holds only what serves every
/// run (pooled coroutines, the size of traces to reserve); [`World::enter`] begins a run in
/// it.
#[derive(Debug)]
pub(crate) struct World {
    /// The run's present moment; `None` when no run is in progress on this thread, which is
    /// how everything else tells a simulated call from a clock or limiter used on its own.
    /// Only the event loop moves it.
    clock: Cell<Option<Moment>>,
    /// The caller whose turn it is, to whom sleeps, events and operations belong; `None`
    /// between turns.
    current: Cell<Option<u32>>,
    /// Everything that happened in the run so far, in order; `None` when no run is in
    /// progress, so that records made outside a run are dropped.
    trace: RefCell<Option<Vec<Record>>>,
    /// Timers registered during the present step, for the event loop to take into its queue.
    timers: RefCell<Vec<Timer>>,
    /// The id of the next timer registered.
    next_timer: Cell<usize>,
    /// How the asynchronous sleep being woken ended, while the event loop polls its caller:
    /// the sleep's future is then a unit struct, and boxing it (as core's `Sleep` type
    /// requires) allocates nothing.
    woken: Cell<Option<Result<(), Interrupted>>>,
    /// Coroutines that wait for a blocking call, kept from run to run.
    pool: Pool,
    /// The most records a run on this thread has made (up to [`MOST_RESERVED`]): room for as
    /// many is made at once for every run's trace, which would otherwise copy itself at every
    /// doubling as it grows.
    most_records: Cell<usize>,
    /// The memory of a trace its run's caller has dropped, emptied, for the next run's: a
    /// sweep drops each scenario's trace before it runs the next.
    spare_trace: RefCell<Vec<Record>>,
}

/// The part of the world that belongs to one run, what [`World::enter`] swaps in and out:
/// the fields of [`World`] of the same names.
#[derive(Debug, Default)]
struct RunState {
    clock: Option<Moment>,
    current: Option<u32>,
    trace: Option<Vec<Record>>,
    timers: Vec<Timer>,
    next_timer: usize,
    woken: Option<Result<(), Interrupted>>,
}

impl World {
    const fn new() -> World {
        World {
            clock: Cell::new(None),
            current: Cell::new(None),
            trace: RefCell::new(None),
            timers: RefCell::new(Vec::new()),
            next_timer: Cell::new(0),
            woken: Cell::new(None),
            pool: Pool::new(),
            most_records: Cell::new(0),
            spare_trace: RefCell::new(Vec::new()),
        }
    }

    /// Runs `run` in this thread's world, begun afresh: virtual time zero with the clock
    /// reading `reading`, nobody's turn, no timer, an empty trace with room for `expected`
    /// records (or for as many as the longest run on this thread made). Hands back what `run`
    /// returned and the trace. Whatever run was in progress on this thread is set aside
    /// meanwhile and resumed afterwards.
    pub(crate) fn enter<T>(
        reading: u64,
        expected: usize,
        run: impl FnOnce(&World) -> T,
    ) -> (T, Vec<Record>) {
        WORLD.with(|world| {
            let begun = RunState {
                clock: Some(Moment { time: 0, reading }),
                trace: Some({
                    let mut trace = world.spare_trace.take();
                    trace.reserve(expected.max(world.most_records.get()));
                    trace
                }),
                ..RunState::default()
            };
            let outer = SetAside {
                world,
                outer: Some(world.exchange(begun)),
            };
            let result = run(world);
            let trace = outer.resume().trace.unwrap_or_default();
            let most = world.most_records.get().max(trace.len().min(MOST_RESERVED));
            world.most_records.set(most);
            (result, trace)
        })
    }

    /// Runs `f` with this thread's world.
    /// Keeps the memory of `trace`, a run's trace its caller is done with, for the next run
    /// on this thread.
    pub(crate) fn keep_trace_memory(mut trace: Vec<Record>) {
        if trace.capacity() == 0 {
            return;
        }
        trace.clear();
        // Gone only while the thread ends, when nothing runs after.
        let _ = WORLD.try_with(|world| {
            let mut spare = world.spare_trace.borrow_mut();
            if trace.capacity() > spare.capacity() {
                *spare = trace;
            }
        });
    }

    #[inline]
    pub(crate) fn with<T>(f: impl FnOnce(&World) -> T) -> T {
        WORLD.with(f)
    }

    /// Puts `state` in place of the run state the world holds, and returns that.
    fn exchange(&self, state: RunState) -> RunState {
        RunState {
            clock: self.clock.replace(state.clock),
            current: self.current.replace(state.current),
            trace: self.trace.replace(state.trace),
            timers: self.timers.replace(state.timers),
            next_timer: self.next_timer.replace(state.next_timer),
            woken: self.woken.replace(state.woken),
        }
    }

    /// The clock's reading now, if a run is in progress.
    #[inline]
    pub(crate) fn reading(&self) -> Option<u64> {
        self.clock.get().map(|moment| moment.reading)
    }

    /// The run's present moment (all zero when no run is in progress).
    pub(crate) fn now(&self) -> Moment {
        self.clock.get().unwrap_or(Moment {
            time: 0,
            reading: 0,
        })
    }

    /// Moves the run to `moment`.
    pub(crate) fn move_to(&self, moment: Moment) {
        self.clock.set(Some(moment));
    }

    /// The caller whose turn it is.
    #[inline]
    pub(crate) fn current(&self) -> Option<u32> {
        self.current.get()
    }

    /// Runs `f`, a call into the subject (or the resumption of a blocking caller's
    /// coroutine), as `caller`'s turn: the sleeps, events and operations it makes are
    /// `caller`'s, and the panic hook stays quiet about its panics, which the simulator
    /// catches and reports. (The turn is entered here, on the simulator's side, rather than
    /// inside a coroutine, so that turns stay nested however coroutines suspend.)
    pub(crate) fn turn<T>(&self, caller: u32, f: impl FnOnce() -> T) -> T {
        let outer = self.current.replace(Some(caller));
        let result = f();
        self.current.set(outer);
        result
    }

    /// Whether this thread is in a caller's turn, whose panics the simulator catches and
    /// reports itself. (False while the thread's world is being torn down.)
    pub(crate) fn in_a_turn() -> bool {
        WORLD
            .try_with(|world| world.current.get().is_some())
            .unwrap_or(false)
    }

    /// Appends `record` to the run's trace; outside a run, nobody would read it.
    #[inline]
    pub(crate) fn record(&self, record: Record) {
        if let Some(trace) = self.trace.borrow_mut().as_mut() {
            trace.push(record);
        }
    }

    /// Registers a sleep of `duration` for the caller whose turn it is and records it; its
    /// timer's id, or `None` if it is nobody's turn (nothing would ever wake the sleep).
    #[expect(
        clippy::inline_always,
        reason = "once per sleep, from the clock's two sleeps: inlined there, the sleep's record \
                  and timer skip a call (callgrind: 3.9 M instructions per 1,000 scenarios), \
                  which the compiler left to itself does not"
    )]
    #[inline(always)]
    pub(crate) fn register(&self, duration: Duration) -> Option<usize> {
        let owner = self.current()?;
        let moment = self.clock.get()?;
        self.record(Record::Sleep {
            caller: owner,
            at: moment.reading,
            until: u128::from(moment.reading) + duration.as_nanos(),
        });
        let id = self.next_timer.get();
        self.next_timer.set(id + 1);
        let step = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        self.timers.borrow_mut().push(Timer {
            owner,
            wake: moment.time.saturating_add(step),
            id,
        });
        Some(id)
    }

    /// Hands the timers registered since the last call to `enqueue`, in order of
    /// registration; whether there were any.
    #[expect(
        clippy::inline_always,
        reason = "the event loop asks after every step and most steps register none; left to \
                  itself the compiler calls it, which costs over 1 % of a run's instructions"
    )]
    #[inline(always)]
    pub(crate) fn take_timers(&self, mut enqueue: impl FnMut(Timer)) -> bool {
        let mut timers = self.timers.borrow_mut();
        if timers.is_empty() {
            return false;
        }
        for timer in timers.drain(..) {
            enqueue(timer);
        }
        true
    }

    /// Tells the asynchronous sleep polled next that it ended with `result`, until
    /// [`woken`](World::woken).
    pub(crate) fn wake(&self, result: Result<(), Interrupted>) {
        self.woken.set(Some(result));
    }

    /// Ends a wake-up: a sleep polled later is still pending.
    pub(crate) fn woken(&self) {
        self.woken.set(None);
    }

    /// How the sleep being polled ended, if it is being woken; taken, so that a sleep the
    /// same caller begins after it stays pending.
    pub(crate) fn take_wake(&self) -> Option<Result<(), Interrupted>> {
        self.woken.take()
    }

    /// The coroutines waiting for a blocking call.
    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }
}

/// The run set aside by [`World::enter`], put back when the run entered ends, even by
/// unwinding.
struct SetAside<'w> {
    world: &'w World,
    outer: Option<RunState>,
}

impl SetAside<'_> {
    /// Puts the outer run back; the state of the run that ended.
    fn resume(mut self) -> RunState {
        let outer = self.outer.take().unwrap_or_default();
        self.world.exchange(outer)
    }
}

impl Drop for SetAside<'_> {
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            self.world.exchange(outer);
        }
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use fixed_window::{Clock, Instant};

    use super::{Moment, World};
    use crate::clock_model::ClockModel;
    use crate::record::Record;
    use crate::virtual_clock::VirtualClock;

    fn interrupt(caller: u32) -> Record {
        Record::Interrupt {
            caller,
            sleeping: false,
        }
    }

    #[test]
    fn outside_a_run_the_clock_reads_its_model_and_nothing_is_recorded_or_registered() {
        let clock = VirtualClock::new(&ClockModel::ordinary(42));
        assert_eq!(clock.now(), Instant::from_nanos(42));
        World::with(|world| {
            world.record(interrupt(0));
            assert_eq!(
                world.turn(0, || world.register(Duration::from_nanos(5))),
                None
            );
            assert!(!world.take_timers(|_| {}));
        });
        let ((), trace) = World::enter(7, 0, |_| {});
        assert!(trace.is_empty(), "{trace:?}");
    }

    #[test]
    fn a_run_entered_within_a_run_leaves_the_outer_one_as_it_was() {
        let clock = VirtualClock::new(&ClockModel::ordinary(42));
        let (timers, outer) = World::enter(100, 0, |world| {
            world.move_to(Moment {
                time: 3,
                reading: 103,
            });
            world.record(interrupt(1));
            let id = world.turn(1, || world.register(Duration::from_nanos(10)));
            assert_eq!(id, Some(0));
            let ((), inner) = World::enter(500, 0, |inner| {
                assert_eq!(clock.now(), Instant::from_nanos(500));
                assert_eq!(inner.current(), None);
                assert!(!inner.take_timers(|_| {}));
                inner.record(interrupt(2));
            });
            assert_eq!(inner, [interrupt(2)]);
            assert_eq!(clock.now(), Instant::from_nanos(103));
            let mut timers = Vec::new();
            assert!(world.take_timers(|timer| timers.push((timer.owner, timer.wake, timer.id))));
            timers
        });
        assert_eq!(timers, [(1, 13, 0)]);
        let sleep = Record::Sleep {
            caller: 1,
            at: 103,
            until: 113,
        };
        assert_eq!(outer, [interrupt(1), sleep]);
        assert_eq!(clock.now(), Instant::from_nanos(42));
    }
}
