//! Pending events in a binary heap ordered by (virtual time, order of scheduling): for a
//! simulation whose events seldom share a time (the shared limiter's, where every message
//! has its own jittered delay), where [`EventQueue`](crate::event_queue::EventQueue)'s
//! buckets, one per time, would cost a map insertion and removal for each event.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event with its time and scheduling order, ordered so that the heap's greatest is the
/// earliest.
#[derive(Debug)]
struct Pending<E> {
    t: u64,
    order: u64,
    event: E,
}

impl<E> PartialEq for Pending<E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<E> Eq for Pending<E> {}

impl<E> PartialOrd for Pending<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Pending<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.t, other.order).cmp(&(self.t, self.order))
    }
}

/// Pending events of type `E`, taken earliest time first and, at equal times, in the order
/// they were pushed.
#[derive(Debug)]
pub(crate) struct EventHeap<E> {
    heap: BinaryHeap<Pending<E>>,
    /// The time of the event taken last.
    now: u64,
    /// The order of the next event pushed.
    next: u64,
}

impl<E> EventHeap<E> {
    pub(crate) fn new() -> EventHeap<E> {
        EventHeap {
            heap: BinaryHeap::new(),
            now: 0,
            next: 0,
        }
    }

    /// Schedules `event` at time `t`, after every event already scheduled at `t`. Times
    /// before the last one taken are taken as that time.
    pub(crate) fn push(&mut self, t: u64, event: E) {
        let order = self.next;
        self.next += 1;
        self.heap.push(Pending {
            t: t.max(self.now),
            order,
            event,
        });
    }

    /// Takes the earliest pending event.
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        let Pending { t, event, .. } = self.heap.pop()?;
        self.now = t;
        Some((t, event))
    }
}

#[cfg(test)]
mod tests {
    use super::EventHeap;

    fn drain(queue: &mut EventHeap<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| queue.pop()).collect()
    }

    #[test]
    fn earliest_time_first_then_order_of_pushing() {
        let mut queue = EventHeap::new();
        for (t, event) in [(5, 0), (3, 1), (5, 2), (9, 3), (3, 4), (5, 5)] {
            queue.push(t, event);
        }
        assert_eq!(
            drain(&mut queue),
            [(3, 1), (3, 4), (5, 0), (5, 2), (5, 5), (9, 3)]
        );
    }

    #[test]
    fn events_pushed_while_taking_keep_their_place_and_the_past_is_now() {
        let mut queue = EventHeap::new();
        queue.push(2, 0);
        queue.push(2, 1);
        queue.push(7, 2);
        assert_eq!(queue.pop(), Some((2, 0)));
        // Due now: after the event already due now, before anything later.
        queue.push(2, 3);
        queue.push(1, 4);
        queue.push(4, 5);
        queue.push(7, 6);
        assert_eq!(
            drain(&mut queue),
            [(2, 1), (2, 3), (2, 4), (4, 5), (7, 2), (7, 6)]
        );
        queue.push(3, 7);
        assert_eq!(drain(&mut queue), [(7, 7)]);
    }
}
