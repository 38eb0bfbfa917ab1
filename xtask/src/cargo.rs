//! Running cargo from xtask: the same cargo that runs xtask, from the workspace root.

use std::path::PathBuf;
use std::process::Command;

/// A failed step, said in one line.
pub type Failure = String;

/// The workspace root (xtask's manifest lives one level below it).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.clone(), PathBuf::from)
}

/// `cargo <args>` at the workspace root.
pub fn cargo<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(workspace_root()).args(args);
    command
}

/// Runs `command`, echoing it first; fails with `step` if it exits non-zero.
///
/// # Errors
///
/// The step's name and exit status if the command could not start or failed.
pub fn run(step: &str, mut command: Command) -> Result<(), Failure> {
    eprintln!("xtask: {step}: {command:?}");
    let status = command
        .status()
        .map_err(|err| format!("{step}: could not start: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}
