//! `fixed-window-sim`: placeholder entry point until the simulator is built.

fn main() {
    println!("the simulator is not built yet");
}
