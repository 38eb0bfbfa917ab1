//! Paths to the shipped fixtures, and a scratch directory per test.

use std::path::PathBuf;

use fixed_window_reports::Paths;

/// The fixtures directory.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The complete fixture inputs: criterion results of a smoke run and a small simulator run.
pub fn complete() -> Paths {
    Paths {
        criterion: dir().join("criterion"),
        cas_retries: dir().join("cas-retries.json"),
        sim: dir().join("sim"),
    }
}

/// An empty scratch directory named for `test`, under the target directory.
pub fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
