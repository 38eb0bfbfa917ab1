//! Where a planted limiter keeps its state: the [`Window`] it stores, and the [`Cell`] it stores
//! it in.

/// A planted limiter's state: the stored window's start, the permits used in it, and the extra
/// permits [`PlantedBug::CarryOver`](crate::PlantedBug::CarryOver) brought into it (zero for every
/// other bug).
///
/// # Examples
///
/// ```
/// use fixed_window_broken::Window;
///
/// let first = Window::first(100);
/// assert_eq!((first.start, first.used, first.extra), (100, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    /// Where the stored window starts, in nanoseconds on the limiter's clock.
    pub start: u128,
    /// Permits taken in it.
    pub used: u32,
    /// Permits it holds beyond the limit.
    pub extra: u32,
}

impl Window {
    /// A new limiter's window: it starts at `origin`, nothing used.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_broken::Window;
    ///
    /// assert_eq!(Window::first(7).used, 0);
    /// ```
    pub fn first(origin: u128) -> Window {
        Window {
            start: origin,
            used: 0,
            extra: 0,
        }
    }
}

/// Where a planted limiter keeps its [`Window`]: every read and write of the state goes through
/// one of these operations, so a checker that owns the cell's primitives sees each one.
///
/// [`Packed`](crate::Packed) is one `AtomicU64`, for loom and shuttle, which must see atomics;
/// [`Wide`](crate::Wide) holds full-range instants, for the simulator's extreme clocks.
///
/// # Examples
///
/// ```
/// use fixed_window_broken::{Cell, Wide, Window};
///
/// let cell = Wide::new(Window::first(5), 1);
/// let claimed = Window { used: 1, ..cell.load() };
/// assert!(cell.compare_exchange(Window::first(5), claimed));
/// assert!(!cell.compare_exchange(Window::first(5), claimed));
/// ```
pub trait Cell: Send + Sync {
    /// The largest limit the cell counts up to.
    const CEILING: u32;

    /// A cell holding `first`, for a limiter of `limit` permits per window.
    ///
    /// # Panics
    ///
    /// If the cell has no room for `first` or for the counts `limit` allows (see each cell).
    fn new(first: Window, limit: u32) -> Self
    where
        Self: Sized;

    /// The window as stored now.
    fn load(&self) -> Window;

    /// Replaces `current` with `new` if the cell still holds `current`; whether it did.
    ///
    /// # Panics
    ///
    /// If the cell has no room for `new`.
    fn compare_exchange(&self, current: Window, new: Window) -> bool;

    /// Replaces whatever the cell holds with `new`.
    ///
    /// # Panics
    ///
    /// If the cell has no room for `new`.
    fn store(&self, new: Window);

    /// Adds one to the used count, in one step, and returns the window as it was before.
    fn add_one(&self) -> Window;
}
