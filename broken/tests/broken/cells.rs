//! The packed and the wide cell hold the same windows the same way.

use fixed_window_broken::{Cell, Packed, Wide, Window};

fn exercise<C: Cell>(cell: &C) -> Vec<Window> {
    let first = cell.load();
    let claimed = Window {
        used: first.used + 1,
        ..first
    };
    let mut seen = vec![first];
    assert!(cell.compare_exchange(first, claimed));
    assert!(!cell.compare_exchange(first, claimed));
    seen.push(cell.load());
    seen.push(cell.add_one());
    cell.store(Window {
        start: 1 << 43,
        used: 3,
        extra: 255,
    });
    seen.push(cell.load());
    seen
}

#[test]
fn packed_and_wide_cells_agree() {
    let first = Window::first(12_345);
    assert_eq!(
        exercise(&Packed::new(first, 255)),
        exercise(&Wide::new(first, 255))
    );
}

#[test]
fn a_packed_cell_refuses_a_start_past_its_bits() {
    let cell = Packed::new(Window::first(0), 1);
    let stored = std::panic::catch_unwind(|| cell.store(Window::first(1 << 44)));
    assert!(stored.is_err());
    assert_eq!(cell.load(), Window::first(0));
}

#[test]
fn a_wide_cell_holds_the_end_of_the_timeline() {
    let last = Window {
        start: u128::from(u64::MAX),
        used: u32::MAX - 1,
        extra: u32::MAX,
    };
    let cell = Wide::new(last, u32::MAX);
    assert_eq!(cell.add_one(), last);
    assert_eq!(cell.load().used, u32::MAX);
}
