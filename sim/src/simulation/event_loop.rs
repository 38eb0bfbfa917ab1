//! The loop itself ([`Simulation`]): events in virtual-time order, each caller's call in flight
//! (a pinned future, or a coroutine for a blocking caller), timers, interrupts and
//! cancellations, and how each call ends.

use core::cell::Cell;
use core::future::Future;
use core::task::{Context, Poll, Waker};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use fixed_window::{Interrupt, Interrupted, RateLimiterError};

use super::{EVENT_BUDGET, Stats};
use crate::coroutine::Handback;
use crate::event_queue::EventQueue;
use crate::record::{CallKind, OpOutput, Outcome, Record};
use crate::scenario::{Peeks, Scenario};
use crate::subject::{Granted, Operation, Subject};
use crate::world::{Moment, Timer, World};

mod outcome;
mod slot;
use self::outcome::{describe, failure};
use self::slot::{Blocking, Pinned, Slot, Task, blocking_call, pinned, spare};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Arrive(u32),
    /// A sleep's timer: the sleeping caller and the timer's id.
    Timer(u32, usize),
    Interrupt(u32),
    Cancel(u32),
    /// Poll a caller that yielded without sleeping.
    Poll(u32),
    /// The scenario's limit change of this index.
    SetLimit(usize),
    /// The scenario's key limit change of this index.
    SetKeyLimit(usize),
}

/// The memory of the last run's per-caller tables on this thread, for the next: a sweep runs
/// thousands of scenarios on each thread, and a scenario's tables take blocks larger than the
/// allocator keeps at hand.
#[derive(Default)]
struct Spare {
    arrivals: Vec<u32>,
    planned: Vec<(u64, Event)>,
    sleeping: Vec<Option<usize>>,
}

thread_local! {
    static SPARE: Cell<Spare> = Cell::new(Spare::default());
}

/// How a run ended, but for its trace (which is the world's).
pub(super) struct Ended {
    pub(super) stats: Stats,
    pub(super) out_of_budget: bool,
    pub(super) panics: Vec<(u32, String)>,
}

/// Runs `scenario` against `subject` in `world`.
pub(super) fn drive<S: Subject>(world: &World, scenario: &Scenario, subject: &Arc<S>) -> Ended {
    let mut simulation = Simulation::new(world, scenario, subject, S::call_async, S::acquire_async);
    simulation.run();
    simulation.finish()
}

/// The event loop of one run of subject `S`, whose asynchronous calls are futures of types
/// `C` (`call_async`) and `A` (`acquire_async`): the run's state but for what the subject's
/// calls reach, which is in [`World`].
struct Simulation<'a, S, C, A> {
    /// What the subject's calls reach: time, whose turn it is, timers, the trace.
    world: &'a World,
    /// The scenario being run.
    scenario: &'a Scenario,
    /// Which of its callers peek before their call.
    peeks: Peeks,
    /// The limiter under test, by `Arc` because blocking calls hold it too: their
    /// coroutines, pooled, outlive the run.
    subject: &'a Arc<S>,
    /// Begins a `call_async` on the subject.
    call: fn(&'a S, Operation) -> C,
    /// Begins an `acquire_async` of so many permits on the subject.
    acquire: fn(&'a S, u32) -> A,
    /// Memory of finished `call_async` futures, for later calls.
    spare_calls: Vec<Pinned<C>>,
    /// Memory of finished `acquire_async` futures, for later calls.
    spare_acquires: Vec<Pinned<A>>,
    /// Pending events by virtual time; ties break by order of scheduling.
    queue: EventQueue<Event>,
    /// The callers in order of arrival (then of caller id), taken in order. The events the
    /// scenario plans count as scheduled before any event of the run itself, arrivals first,
    /// so at equal times they come first, and need no place in `queue`.
    arrivals: Vec<u32>,
    /// The next arrival to take.
    next_arrival: usize,
    /// The interrupts and cancellations the scenario plans, by virtual time and then caller,
    /// taken in order after arrivals at equal times.
    planned: Vec<(u64, Event)>,
    /// The next of them to take.
    next_planned: usize,
    /// Each caller's pending timer, by caller id.
    sleeping: Vec<Option<usize>>,
    /// Each caller's progress, by caller id.
    slots: Vec<Slot<C, A>>,
    /// Counts so far.
    stats: Stats,
    /// Whether the run stopped at its event budget.
    out_of_budget: bool,
    /// Messages of escaped panics, by caller.
    panics: Vec<(u32, String)>,
}

impl<'a, S, C, A> Simulation<'a, S, C, A>
where
    S: Subject,
    C: Future<Output = Result<OpOutput, RateLimiterError>>,
    A: Future<Output = Result<Granted, RateLimiterError>>,
{
    fn new(
        world: &'a World,
        scenario: &'a Scenario,
        subject: &'a Arc<S>,
        call: fn(&'a S, Operation) -> C,
        acquire: fn(&'a S, u32) -> A,
    ) -> Simulation<'a, S, C, A> {
        let spare = SPARE.take();
        let mut sleeping = spare.sleeping;
        sleeping.clear();
        sleeping.resize(scenario.callers.len(), None);
        Simulation {
            world,
            peeks: Peeks::draw(scenario.id.seed),
            scenario,
            subject,
            call,
            acquire,
            spare_calls: Vec::new(),
            spare_acquires: Vec::new(),
            queue: EventQueue::new(),
            arrivals: arrivals(scenario, spare.arrivals),
            next_arrival: 0,
            planned: planned(scenario, spare.planned),
            next_planned: 0,
            sleeping,
            slots: (0..scenario.callers.len()).map(|_| Slot::Waiting).collect(),
            stats: Stats::default(),
            out_of_budget: false,
            panics: Vec::new(),
        }
    }

    fn schedule(&mut self, t: u64, event: Event) {
        self.queue.push(t, event);
    }

    /// The step loop: take the earliest event, move virtual time to it, act on it, and move
    /// any timers registered meanwhile into the queue.
    fn run(&mut self) {
        while let Some((t, event)) = self.next_event() {
            if self.stats.events >= EVENT_BUDGET {
                self.out_of_budget = true;
                break;
            }
            self.stats.events += 1;
            self.world.move_to(Moment {
                time: t,
                reading: self.scenario.clock.reading(t),
            });
            match event {
                Event::Arrive(caller) => self.arrive(caller),
                Event::Timer(caller, id) => self.fire(caller, id),
                Event::Interrupt(caller) => self.interrupt(caller),
                Event::Cancel(caller) => self.cancel(caller),
                Event::Poll(caller) => self.poll(caller),
                Event::SetLimit(change) => self.set_limit(change),
                Event::SetKeyLimit(change) => self.set_key_limit(change),
            }
        }
        self.stats.simulated_ns = self.world.now().time;
    }

    /// The earliest event: of the arrivals, the other planned events and the queue, in that
    /// order at equal times.
    fn next_event(&mut self) -> Option<(u64, Event)> {
        let queued = self.queue.peek_time();
        let planned = self.planned.get(self.next_planned).copied();
        if let Some(&caller) = self.arrivals.get(self.next_arrival) {
            let t = self.scenario.callers[caller as usize].arrival;
            if planned.is_none_or(|(other, _)| t <= other) && queued.is_none_or(|q| t <= q) {
                self.next_arrival += 1;
                return Some((t, Event::Arrive(caller)));
            }
        }
        if let Some((t, event)) = planned
            && queued.is_none_or(|q| t <= q)
        {
            self.next_planned += 1;
            return Some((t, event));
        }
        self.queue.pop()
    }

    /// `caller` peeks before its call: a peek emits no event and takes nothing, so only its
    /// answer is recorded. Whether the call goes on: a panic escaping the peek ends it, judged
    /// as any.
    #[cold]
    fn peek(&mut self, caller: u32) -> bool {
        let subject: &'a S = self.subject;
        let world = self.world;
        match world.turn(caller, || catch_unwind(AssertUnwindSafe(|| subject.peek()))) {
            Ok(peek) => {
                world.record(Record::Peeked {
                    caller,
                    at: world.now().reading,
                    remaining: peek.remaining(),
                    limit: peek.limit(),
                    resets_in: peek.resets_in().as_nanos(),
                });
                true
            }
            Err(payload) => {
                let outcome = self.panicked(caller, &*payload);
                self.end(caller, outcome);
                false
            }
        }
    }

    fn arrive(&mut self, caller: u32) {
        // By reference: a copy of the caller's and the limiter's settings cost every arrival
        // more than what it reads of them.
        let scenario: &'a Scenario = self.scenario;
        let spec = &scenario.callers[caller as usize];
        let config = &scenario.config;
        self.stats.calls += 1;
        {
            let at = self.world.now().reading;
            self.world.record(Record::Start {
                caller,
                at,
                kind: spec.kind,
                max_wait: if spec.kind.may_wait() {
                    config.max_wait.as_nanos()
                } else {
                    0
                },
                op: spec.op,
                key: spec.key,
                weight: spec.weight,
            });
        }
        let subject: &'a S = self.subject;
        let world = self.world;
        if spec.kind != CallKind::Drain && self.peeks.before(caller) && !self.peek(caller) {
            return;
        }
        match spec.kind {
            CallKind::TryAcquire => {
                let result = world.turn(caller, || {
                    catch_unwind(AssertUnwindSafe(|| subject.try_acquire(spec.weight)))
                });
                let outcome = match result {
                    Ok(Ok(granted)) => Outcome::Permitted {
                        remaining: Some(granted.remaining),
                        op: None,
                    },
                    Ok(Err(error)) => failure(&error, config, spec.weight),
                    Err(payload) => self.panicked(caller, &*payload),
                };
                self.end(caller, outcome);
            }
            CallKind::Drain => {
                let result = world.turn(caller, || {
                    catch_unwind(AssertUnwindSafe(|| subject.drain()))
                });
                let outcome = match result {
                    Ok(retry_after) => {
                        let retry_after = retry_after.as_nanos();
                        let at = world.now().reading;
                        world.record(Record::Drained {
                            caller,
                            at,
                            retry_after,
                        });
                        Outcome::Drained { retry_after }
                    }
                    Err(payload) => self.panicked(caller, &*payload),
                };
                self.end(caller, outcome);
            }
            CallKind::CallAsync => {
                let operation = Operation::new(spec.op);
                let call = pinned(&mut self.spare_calls, (self.call)(subject, operation));
                self.slots[caller as usize] = Slot::Async(Task::Call(call));
                self.poll(caller);
            }
            CallKind::AcquireAsync => {
                let acquire = pinned(
                    &mut self.spare_acquires,
                    (self.acquire)(subject, spec.weight),
                );
                self.slots[caller as usize] = Slot::Async(Task::Acquire(acquire));
                self.poll(caller);
            }
            CallKind::CallBlocking => {
                let interrupt = Interrupt::new();
                let call = blocking_call(
                    Arc::clone(self.subject),
                    interrupt.clone(),
                    spec.op,
                    *config,
                );
                let (coroutine, handback) = world.turn(caller, || world.pool().start(call));
                self.slots[caller as usize] = Slot::Blocking(Box::new(Blocking {
                    coroutine,
                    interrupt,
                }));
                self.handed_back(caller, handback);
            }
        }
    }

    /// Resumes a sleeping blocking caller with how its sleep ended, until it sleeps again or
    /// its call ends.
    fn wake_blocking(&mut self, caller: u32, woken: Result<(), Interrupted>) {
        let Slot::Blocking(blocking) = &mut self.slots[caller as usize] else {
            return;
        };
        let handback = self.world.turn(caller, || blocking.coroutine.wake(woken));
        self.handed_back(caller, handback);
    }

    /// Acts on what a blocking caller's coroutine handed back.
    fn handed_back(&mut self, caller: u32, handback: Handback) {
        match handback {
            Handback::Sleeping => self.stats.waits += 1,
            Handback::Done(outcome, message) => {
                if let Slot::Blocking(blocking) =
                    std::mem::replace(&mut self.slots[caller as usize], Slot::Done)
                {
                    self.world.pool().release(blocking.coroutine);
                }
                if let Some(message) = message {
                    self.panics.push((caller, message));
                }
                self.end(caller, outcome);
            }
            // Only a coroutine with no call is idle; a blocking caller's has one.
            Handback::Idle => {}
        }
        self.enqueue_timers();
    }

    fn poll(&mut self, caller: u32) {
        let Slot::Async(task) = &mut self.slots[caller as usize] else {
            return;
        };
        let config = &self.scenario.config;
        let weight = self.scenario.callers[caller as usize].weight;
        let mut context = Context::from_waker(Waker::noop());
        let result = self.world.turn(caller, || {
            catch_unwind(AssertUnwindSafe(|| task.poll(&mut context, config, weight)))
        });
        // Ending a call schedules nothing, so the new timers may go first.
        let slept = self.enqueue_timers();
        match result {
            Ok(Poll::Ready(outcome)) => self.end(caller, outcome),
            Ok(Poll::Pending) if slept => self.stats.waits += 1,
            Ok(Poll::Pending) => {
                let now = self.world.now().time;
                self.schedule(now, Event::Poll(caller));
            }
            Err(payload) => {
                let outcome = self.panicked(caller, &*payload);
                self.end(caller, outcome);
            }
        }
    }

    /// Moves the timers registered since the last step into the queue; whether there were
    /// any.
    fn enqueue_timers(&mut self) -> bool {
        let world = self.world;
        world.take_timers(|timer| self.enqueue(timer))
    }

    fn enqueue(&mut self, timer: Timer) {
        self.sleeping[timer.owner as usize] = Some(timer.id);
        self.schedule(timer.wake, Event::Timer(timer.owner, timer.id));
    }

    fn fire(&mut self, owner: u32, id: usize) {
        // A timer whose caller was woken otherwise, or dropped its sleep, is stale.
        if self.sleeping[owner as usize] != Some(id) {
            return;
        }
        self.sleeping[owner as usize] = None;
        self.resume(owner, Ok(()));
    }

    fn resume(&mut self, caller: u32, result: Result<(), Interrupted>) {
        match &self.slots[caller as usize] {
            Slot::Async(_) => {
                self.world.wake(result);
                self.poll(caller);
                self.world.woken();
            }
            Slot::Blocking(..) => self.wake_blocking(caller, result),
            Slot::Waiting | Slot::Done => {}
        }
    }

    fn interrupt(&mut self, caller: u32) {
        let pending = self.sleeping[caller as usize].take();
        if !matches!(self.slots[caller as usize], Slot::Waiting | Slot::Done) {
            self.world.record(Record::Interrupt {
                caller,
                sleeping: pending.is_some(),
            });
        }
        if let Slot::Blocking(blocking) = &self.slots[caller as usize] {
            blocking.interrupt.interrupt();
        }
        if pending.is_some() {
            self.resume(caller, Err(Interrupted));
        }
    }

    /// Makes the scenario's limit change `change`, between callers' turns, and records what
    /// the limiter answered.
    fn set_limit(&mut self, change: usize) {
        let limit = self.scenario.limit_changes[change].limit;
        let accepted = self.subject.set_limit(limit).is_ok();
        self.world.record(Record::LimitSet {
            at: self.world.now().reading,
            limit,
            ceiling: self.subject.limit_ceiling(),
            accepted,
        });
    }

    /// Makes the scenario's change `change` of one key's own limit, between callers' turns,
    /// and records what the limiter answered.
    fn set_key_limit(&mut self, change: usize) {
        let change = self.scenario.key_limits.changes[change];
        let accepted = self.subject.set_key_limit(change.key, change.limit).is_ok();
        self.world.record(Record::KeyLimitSet {
            at: self.world.now().reading,
            key: change.key,
            limit: change.limit,
            ceiling: self.subject.limit_ceiling(),
            accepted,
        });
    }

    fn cancel(&mut self, caller: u32) {
        if let Slot::Async(_) = self.slots[caller as usize] {
            // Dropping the future cancels its sleep; that is the cancellation under test.
            self.vacate(caller, Slot::Waiting);
            self.sleeping[caller as usize] = None;
            self.end(caller, Outcome::Cancelled);
        }
    }

    /// Puts `next` in `caller`'s slot, keeping the memory of an asynchronous call's future
    /// that was there.
    #[expect(
        clippy::inline_always,
        reason = "once per call, from several places: inlined, its slot's move and the \
                  future's drop skip a call (callgrind: 1.7 M instructions per 1,000 \
                  scenarios), which the compiler left to itself does not"
    )]
    #[inline(always)]
    fn vacate(&mut self, caller: u32, next: Slot<C, A>) {
        match std::mem::replace(&mut self.slots[caller as usize], next) {
            Slot::Async(Task::Call(call)) => spare(&mut self.spare_calls, call),
            Slot::Async(Task::Acquire(acquire)) => spare(&mut self.spare_acquires, acquire),
            // Dropped here, by name: left to the match, every slot vacated (mostly a waiting
            // caller's or an ended call's, which hold nothing) was dropped by a call.
            Slot::Blocking(blocking) => drop(blocking),
            Slot::Waiting | Slot::Done => {}
        }
    }

    /// The outcome of a call that panicked with `payload`, keeping the message of any panic
    /// that was not simulated.
    fn panicked(&mut self, caller: u32, payload: &(dyn Any + Send)) -> Outcome {
        let (outcome, message) = describe(payload);
        if let Some(message) = message {
            self.panics.push((caller, message));
        }
        outcome
    }

    #[expect(
        clippy::inline_always,
        reason = "once per call, mostly from `poll`: inlined there, the outcome's match and \
                  the record skip a call (callgrind: 5.0 M instructions per 1,000 scenarios), \
                  which the compiler left to itself does not"
    )]
    #[inline(always)]
    fn end(&mut self, caller: u32, outcome: Outcome) {
        match outcome {
            Outcome::Permitted { .. } => self.stats.permits += 1,
            Outcome::Rejected { .. } | Outcome::TooMany { .. } => self.stats.rejections += 1,
            Outcome::Interrupted => self.stats.interrupts += 1,
            Outcome::Drained { .. }
            | Outcome::Cancelled
            | Outcome::Panicked { .. }
            | Outcome::Unfinished => {}
        }
        self.vacate(caller, Slot::Done);
        let now = self.world.now();
        self.world.record(Record::Finish {
            caller,
            at: now.reading,
            t: now.time,
            outcome,
        });
    }

    /// Ends every call still in flight (only when the event budget ran out), running the
    /// coroutines of blocking callers to their end.
    fn finish(mut self) -> Ended {
        for caller in 0..self.slots.len() {
            let caller = u32::try_from(caller).unwrap_or(u32::MAX);
            match std::mem::replace(&mut self.slots[caller as usize], Slot::Done) {
                Slot::Blocking(blocking) => {
                    let Blocking {
                        mut coroutine,
                        interrupt,
                    } = *blocking;
                    // Interrupted and resumed until its call ends: a coroutine dropped
                    // mid-call would be unwound by a panic of the coroutine library's own.
                    interrupt.interrupt();
                    let world = self.world;
                    while let Handback::Sleeping =
                        world.turn(caller, || coroutine.wake(Err(Interrupted)))
                    {
                    }
                    world.pool().release(coroutine);
                    self.end(caller, Outcome::Unfinished);
                }
                Slot::Async(task) => {
                    drop(task);
                    self.end(caller, Outcome::Unfinished);
                }
                Slot::Waiting | Slot::Done => {}
            }
        }
        SPARE.set(Spare {
            arrivals: self.arrivals,
            planned: self.planned,
            sleeping: self.sleeping,
        });
        Ended {
            stats: self.stats,
            out_of_budget: self.out_of_budget,
            panics: self.panics,
        }
    }
}

/// `scenario`'s callers by time of arrival, then id, in `order`'s memory.
fn arrivals(scenario: &Scenario, mut order: Vec<u32>) -> Vec<u32> {
    let callers = &scenario.callers;
    order.clear();
    order.extend(0..u32::try_from(callers.len()).unwrap_or(u32::MAX));
    // Drawn scenarios list their callers in order of arrival already.
    if !callers.is_sorted_by_key(|spec| spec.arrival) {
        // Stable, so equal times keep the order of ids.
        order.sort_by_key(|&caller| callers[caller as usize].arrival);
    }
    order
}

/// The interrupts and cancellations `scenario` plans, by virtual time; at equal times by
/// caller, an interrupt before a cancellation; in `planned`'s memory.
fn planned(scenario: &Scenario, mut planned: Vec<(u64, Event)>) -> Vec<(u64, Event)> {
    planned.clear();
    for (caller, spec) in (0_u32..).zip(&scenario.callers) {
        if let Some(t) = spec.interrupt_at {
            planned.push((t, Event::Interrupt(caller)));
        }
        if let Some(t) = spec.cancel_at {
            planned.push((t, Event::Cancel(caller)));
        }
    }
    for (change, planned_change) in scenario.limit_changes.iter().enumerate() {
        planned.push((planned_change.at, Event::SetLimit(change)));
    }
    for (change, planned_change) in scenario.key_limits.changes.iter().enumerate() {
        planned.push((planned_change.at, Event::SetKeyLimit(change)));
    }
    // Stable, so equal times keep the order above.
    planned.sort_by_key(|&(t, _)| t);
    planned
}
