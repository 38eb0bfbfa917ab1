//! The state behind a lock, for full-range instants and counts.

use std::sync::PoisonError;

use crate::cell::{Cell, Window};
use crate::sync::Mutex;

/// A [`Cell`] that holds any [`Window`] behind a mutex (the sync shim's): instants up to the end
/// of the timeline and limits up to `u32::MAX`, as a simulator's extreme clocks and huge limits
/// need. Each operation is one critical section, so it is as atomic as [`Packed`]'s word.
///
/// [`Packed`]: crate::Packed
///
/// # Examples
///
/// ```
/// use fixed_window_broken::{Cell, Wide, Window};
///
/// let cell = Wide::new(Window::first(u128::from(u64::MAX)), u32::MAX);
/// cell.store(Window { used: 7, ..cell.load() });
/// assert_eq!(cell.add_one().used, 7);
/// assert_eq!(cell.load().used, 8);
/// ```
#[derive(Debug)]
pub struct Wide(Mutex<Window>);

impl Wide {
    fn with<T>(&self, f: impl FnOnce(&mut Window) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Cell for Wide {
    const CEILING: u32 = u32::MAX;

    fn new(first: Window, _limit: u32) -> Wide {
        Wide(Mutex::new(first))
    }

    fn load(&self) -> Window {
        self.with(|window| *window)
    }

    fn compare_exchange(&self, current: Window, new: Window) -> bool {
        self.with(|window| {
            let same = *window == current;
            if same {
                *window = new;
            }
            same
        })
    }

    fn store(&self, new: Window) {
        self.with(|window| *window = new);
    }

    fn add_one(&self) -> Window {
        self.with(|window| {
            let before = *window;
            window.used = window.used.saturating_add(1);
            before
        })
    }
}
