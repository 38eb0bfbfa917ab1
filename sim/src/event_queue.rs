//! The simulator's pending events, ordered by (virtual time, order of scheduling).
//!
//! Events are kept in one first-in-first-out bucket per virtual time rather than in a heap
//! of (time, sequence number) pairs: appending to a bucket keeps the scheduling order that
//! a sequence number would encode, and the common cases cost no heap sift at all. A herd of
//! waiters that all sleep until the same window opening lands in one bucket, kept out of the
//! map while it is being filled, and the events due now are taken from the front of the
//! current bucket.

use std::collections::BTreeMap;

/// Pending events of type `E`, taken earliest time first and, at equal times, in the order
/// they were pushed.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    /// The time of the bucket being taken from.
    now: u64,
    /// The events due at `now`, the first `taken` of them already taken.
    current: Vec<E>,
    taken: usize,
    /// The bucket pushed to last, if it is not the current one: the time, and the events.
    /// Its time has no entry in `later`.
    filling: Option<(u64, Vec<E>)>,
    /// Other later buckets, by time.
    later: BTreeMap<u64, Vec<E>>,
    /// Emptied buckets, kept to reuse their memory.
    spare: Vec<Vec<E>>,
}

impl<E: Copy> EventQueue<E> {
    pub(crate) fn new() -> EventQueue<E> {
        EventQueue {
            now: 0,
            current: Vec::new(),
            taken: 0,
            filling: None,
            later: BTreeMap::new(),
            spare: Vec::new(),
        }
    }

    /// Schedules `event` at time `t`, after every event already scheduled at `t`. Times
    /// before the last one taken are taken next, as if they were that time.
    #[inline]
    pub(crate) fn push(&mut self, t: u64, event: E) {
        if t <= self.now && self.taken < self.current.len() {
            self.current.push(event);
            return;
        }
        let bucket = match &mut self.filling {
            Some((time, bucket)) if *time == t => bucket,
            _ => self.fill(t),
        };
        // Written here rather than handed to `fill`: an event passed by reference is built on
        // the stack field by field and read back whole, a load that waits for those stores.
        bucket.push(event);
    }

    /// Makes the bucket of time `t`, other than the present one's and the one being filled,
    /// the one being filled: out of line, as the least common case.
    #[inline(never)]
    fn fill(&mut self, t: u64) -> &mut Vec<E> {
        if let Some((time, bucket)) = self.filling.take() {
            self.later.insert(time, bucket);
        }
        let bucket = self
            .later
            .remove(&t)
            .unwrap_or_else(|| self.spare.pop().unwrap_or_default());
        &mut self.filling.insert((t, bucket)).1
    }

    /// The time of the earliest pending event.
    pub(crate) fn peek_time(&self) -> Option<u64> {
        if self.taken < self.current.len() {
            return Some(self.now);
        }
        let later = self.later.first_key_value().map(|(&t, _)| t);
        match (&self.filling, later) {
            (Some((filling, _)), Some(later)) => Some(later.min(*filling)),
            (Some((filling, _)), None) => Some(*filling),
            (None, later) => later,
        }
    }

    /// Takes the earliest pending event.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        if self.taken == self.current.len() {
            self.advance()?;
        }
        let event = self.current[self.taken];
        self.taken += 1;
        Some((self.now, event))
    }

    /// Moves on to the earliest time with events pending, once those at the present one are
    /// all taken; `None` if none are pending. Out of line: most events are taken from the
    /// present time's, in the loop that [`pop`](EventQueue::pop) is inlined into.
    #[inline(never)]
    fn advance(&mut self) -> Option<()> {
        let later = self.later.first_key_value().map(|(&t, _)| t);
        let (t, bucket) = match (&self.filling, later) {
            (Some((filling, _)), later) if later.is_none_or(|later| *filling < later) => {
                self.filling.take()?
            }
            _ => self.later.pop_first()?,
        };
        let mut done = std::mem::replace(&mut self.current, bucket);
        done.clear();
        self.spare.push(done);
        self.now = t;
        self.taken = 0;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::EventQueue;

    fn drain(queue: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| queue.pop()).collect()
    }

    #[test]
    fn earliest_time_first_then_order_of_pushing() {
        let mut queue = EventQueue::new();
        for (t, event) in [(5, 0), (3, 1), (5, 2), (9, 3), (3, 4), (5, 5)] {
            queue.push(t, event);
        }
        assert_eq!(queue.peek_time(), Some(3));
        assert_eq!(
            drain(&mut queue),
            [(3, 1), (3, 4), (5, 0), (5, 2), (5, 5), (9, 3)]
        );
        assert_eq!(queue.peek_time(), None);
    }

    #[test]
    fn events_pushed_while_taking_keep_their_place() {
        let mut queue = EventQueue::new();
        queue.push(2, 0);
        queue.push(2, 1);
        queue.push(7, 2);
        assert_eq!(queue.pop(), Some((2, 0)));
        // Due now: after the event already due now, before anything later.
        queue.push(2, 3);
        // Later, alternating between two times, as herds of waiters do.
        queue.push(4, 4);
        queue.push(7, 5);
        queue.push(4, 6);
        assert_eq!(
            drain(&mut queue),
            [(2, 1), (2, 3), (4, 4), (4, 6), (7, 2), (7, 5)]
        );
        queue.push(8, 7);
        assert_eq!(drain(&mut queue), [(8, 7)]);
    }
}
