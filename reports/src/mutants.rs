//! A cargo-mutants run (`cargo xtask mutants`): how many mutants the tests caught, and which
//! survived; and the survivors `docs/mutants.md` explains as equivalent (no test can tell them
//! from the original).

use std::collections::BTreeSet;

use serde::Deserialize;

/// One cargo-mutants run's `mutants.out/outcomes.json`, as far as the report reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationRun {
    /// Mutants generated.
    pub total: u64,
    /// Mutants a test failed on.
    pub caught: u64,
    /// Mutants whose tests ran past the timeout: a hang, so caught.
    pub timeout: u64,
    /// Mutants that did not build: not counted either way.
    pub unviable: u64,
    /// The survivors, by cargo-mutants' name (`file:line:column: replace … with …`).
    pub missed: Vec<String>,
    /// When the run began, as cargo-mutants wrote it.
    pub start_time: String,
    /// cargo-mutants' version.
    pub version: String,
}

#[derive(Deserialize)]
struct RunFile {
    total_mutants: u64,
    caught: u64,
    timeout: u64,
    unviable: u64,
    #[serde(default)]
    start_time: String,
    #[serde(default)]
    cargo_mutants_version: String,
    outcomes: Vec<Outcome>,
}

#[derive(Deserialize)]
struct Outcome {
    scenario: serde_json::Value,
    summary: String,
}

impl MutationRun {
    /// Parses cargo-mutants' `outcomes.json`.
    ///
    /// # Errors
    ///
    /// If the text is not that JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::MutationRun;
    ///
    /// let text = r#"{"total_mutants": 3, "caught": 1, "timeout": 0, "unviable": 1, "missed": 1,
    ///   "outcomes": [
    ///     {"scenario": "Baseline", "summary": "Success"},
    ///     {"scenario": {"Mutant": {"name": "a.rs:1:2: replace + with -"}}, "summary": "MissedMutant"}]}"#;
    /// let run = MutationRun::parse(text)?;
    /// assert_eq!((run.total, run.caught, run.unviable), (3, 1, 1));
    /// assert_eq!(run.missed, ["a.rs:1:2: replace + with -"]);
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<MutationRun, String> {
        let outcomes: RunFile = serde_json::from_str(text).map_err(|err| err.to_string())?;
        let missed = outcomes
            .outcomes
            .iter()
            .filter(|outcome| outcome.summary == "MissedMutant")
            .filter_map(|outcome| outcome.scenario["Mutant"]["name"].as_str())
            .map(str::to_owned)
            .collect();
        Ok(MutationRun {
            total: outcomes.total_mutants,
            caught: outcomes.caught,
            timeout: outcomes.timeout,
            unviable: outcomes.unviable,
            missed,
            start_time: outcomes.start_time,
            version: outcomes.cargo_mutants_version,
        })
    }

    /// The survivors not in `equivalent`: the tests' gaps.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::{Equivalents, MutationRun};
    ///
    /// let text = r#"{"total_mutants": 2, "caught": 0, "timeout": 0, "unviable": 0, "outcomes": [
    ///     {"scenario": {"Mutant": {"name": "a.rs:1:2: replace + with -"}}, "summary": "MissedMutant"},
    ///     {"scenario": {"Mutant": {"name": "a.rs:3:4: replace < with <="}}, "summary": "MissedMutant"}]}"#;
    /// let run = MutationRun::parse(text)?;
    /// let equivalent = Equivalents::parse("| `a.rs:3:4: replace < with <=` | equivalent | one instant |");
    /// assert_eq!(run.gaps(&equivalent), ["a.rs:1:2: replace + with -"]);
    /// # Ok::<(), String>(())
    /// ```
    pub fn gaps<'a>(&'a self, equivalent: &Equivalents) -> Vec<&'a str> {
        self.missed
            .iter()
            .map(String::as_str)
            .filter(|name| !equivalent.0.contains(*name))
            .collect()
    }
}

/// The survivors `docs/mutants.md` explains as equivalent: the names in backquotes of each
/// table row whose second cell is `equivalent` (a `|` in a name is written `\|`, as Markdown
/// tables want).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Equivalents(pub BTreeSet<String>);

impl Equivalents {
    /// Reads the rows of `docs/mutants.md`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::Equivalents;
    ///
    /// let text = "| mutant | verdict | why |\n|---|---|---|\n\
    ///             | `a.rs:1:2: replace * with +` | equivalent | a far future either way |\n\
    ///             | `a.rs:3:4: replace \\| with ^` | equivalent | disjoint bits |\n\
    ///             | `a.rs:5:6: replace < with >` | gap | no test sees it |";
    /// let equivalent = Equivalents::parse(text);
    /// assert!(equivalent.0.contains("a.rs:1:2: replace * with +"));
    /// assert!(equivalent.0.contains("a.rs:3:4: replace | with ^"));
    /// assert_eq!(equivalent.0.len(), 2);
    /// ```
    pub fn parse(text: &str) -> Equivalents {
        Equivalents(
            text.lines()
                .filter_map(|line| {
                    // An escaped bar is part of a cell, not a border between two.
                    let line = line.replace("\\|", "\u{0}");
                    let mut cells = line.trim().strip_prefix('|')?.split('|');
                    let name = cells.next()?.trim().strip_prefix('`')?.strip_suffix('`')?;
                    (cells.next()?.trim() == "equivalent").then(|| name.replace('\u{0}', "|"))
                })
                .collect(),
        )
    }
}
