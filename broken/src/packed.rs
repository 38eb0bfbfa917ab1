//! The state in one `AtomicU64`, for model checkers that must see every access as an atomic.

use crate::cell::{Cell, Window};
use crate::sync::atomic::{AtomicU64, Ordering};

/// Bits of the used count, the word's lowest, so that [`Cell::add_one`] is one `fetch_add`.
const USED_BITS: u32 = 10;
/// Bits of the extra permits, above the used count.
const EXTRA_BITS: u32 = 10;
/// Bits of the window's start, the rest of the word.
const START_BITS: u32 = u64::BITS - USED_BITS - EXTRA_BITS;
/// The largest limit whose counts fit: carried-over permits can double it, and racing callers
/// of an overcounting limiter can push the count a little past that.
const LARGEST_LIMIT: u32 = (1 << (USED_BITS - 2)) - 1;

/// A [`Cell`] that is one `AtomicU64` from the crate's sync shim (std's, loom's or shuttle's),
/// so each load, store, compare-and-set and add is a scheduling point a checker explores.
///
/// The window's start takes the high 44 bits, the extra permits the next 10 and the used count
/// the low 10: room for the small numbers of a model, not for the whole timeline.
///
/// # Panics
///
/// [`Cell::new`] panics for a limit above 255, and every write for a start at or past 2^44 ns
/// (about four and a half hours) or a count past its bits.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::{Cell, Packed, Window};
///
/// let cell = Packed::new(Window::first(40), 3);
/// cell.add_one();
/// assert_eq!(cell.load(), Window { start: 40, used: 1, extra: 0 });
/// ```
#[derive(Debug)]
pub struct Packed(AtomicU64);

impl Cell for Packed {
    const CEILING: u32 = LARGEST_LIMIT;

    fn new(first: Window, limit: u32) -> Packed {
        assert!(
            limit <= LARGEST_LIMIT,
            "a packed cell holds limits up to {LARGEST_LIMIT}, not {limit}"
        );
        Packed(AtomicU64::new(encode(first)))
    }

    fn load(&self) -> Window {
        decode(self.0.load(Ordering::SeqCst))
    }

    fn compare_exchange(&self, current: Window, new: Window) -> bool {
        self.0
            .compare_exchange(
                encode(current),
                encode(new),
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
    }

    fn store(&self, new: Window) {
        self.0.store(encode(new), Ordering::SeqCst);
    }

    fn add_one(&self) -> Window {
        decode(self.0.fetch_add(1, Ordering::SeqCst))
    }
}

fn encode(window: Window) -> u64 {
    let start = u64::try_from(window.start)
        .ok()
        .filter(|start| start >> START_BITS == 0);
    let start = start.expect("a packed cell holds window starts below 2^44 ns");
    assert!(
        window.used >> USED_BITS == 0 && window.extra >> EXTRA_BITS == 0,
        "a packed cell's counts overflowed: {window:?}"
    );
    (start << (USED_BITS + EXTRA_BITS))
        | (u64::from(window.extra) << USED_BITS)
        | u64::from(window.used)
}

fn decode(word: u64) -> Window {
    let field = |shift: u32, bits: u32| {
        u32::try_from((word >> shift) & ((1 << bits) - 1)).unwrap_or(u32::MAX)
    };
    Window {
        start: u128::from(word >> (USED_BITS + EXTRA_BITS)),
        used: field(0, USED_BITS),
        extra: field(USED_BITS, EXTRA_BITS),
    }
}
