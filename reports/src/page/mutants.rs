//! The mutation score: for each crate `cargo xtask mutants` ran over, how many mutants its tests
//! caught, and the survivors, each either explained as equivalent in `docs/mutants.md` or a gap
//! in the tests.

use html_escape::encode_text as esc;

use crate::inputs::{Inputs, MUTATED_CRATES};
use crate::numbers::grouped;
use crate::page::Page;
use crate::page::table::{Table, TableCell};

pub fn section(page: &mut Page, inputs: &Inputs) {
    page.heading(2, "Mutation score");
    page.paragraph(
        "<code>cargo xtask mutants --crate core</code> (the core crate, judged by its own \
         tests, the simulator's and the models') and <code>--crate redis</code> (the shared \
         limiter's decision code: its protocol, its memory of full windows and its \
         coalescing, judged by its tests on real servers and the simulator's): each mutant is \
         a small change to the code that a test should notice. A mutant that timed out made a \
         test hang, which counts as caught; one that does not build counts for nothing. A \
         survivor is either equivalent (no test can tell it from the code; \
         <code>docs/mutants.md</code> says why) or a gap in the tests. Slow, so not run in CI.",
    );
    let mut table = Table::new([
        "crate",
        "mutants",
        "caught",
        "timed out",
        "unviable",
        "survived",
        "of them equivalent",
        "gaps",
        "score (caught of viable, equivalents aside)",
    ]);
    for name in MUTATED_CRATES {
        let Some((_, run)) = inputs
            .mutants
            .iter()
            .find(|(crate_name, _)| *crate_name == name)
        else {
            table.row([
                TableCell::text(name),
                TableCell::text(format!("not run here: cargo xtask mutants --crate {name}"))
                    .class("missing")
                    .span(8),
            ]);
            continue;
        };
        let gaps = run.gaps(&inputs.equivalents);
        let survived = run.missed.len() as u64;
        let equivalent = survived - gaps.len() as u64;
        let killed = run.caught + run.timeout;
        let judged = killed + gaps.len() as u64;
        let score = (killed * 1_000).checked_div(judged).map_or_else(
            || "n/a".to_owned(),
            |tenths| format!("{}.{} %", tenths / 10, tenths % 10),
        );
        table.row([
            TableCell::text(name),
            TableCell::text(grouped(run.total)),
            TableCell::text(grouped(run.caught)),
            TableCell::text(grouped(run.timeout)),
            TableCell::text(grouped(run.unviable)),
            TableCell::text(grouped(survived)),
            TableCell::text(grouped(equivalent)),
            TableCell::text(grouped(gaps.len() as u64)).class(if gaps.is_empty() {
                "met"
            } else {
                "miss"
            }),
            TableCell::text(score),
        ]);
    }
    page.table(&table);
    for (name, run) in &inputs.mutants {
        page.provenance(&format!(
            "{}: cargo-mutants {}, begun {}.",
            esc(name),
            esc(&run.version),
            esc(&run.start_time)
        ));
        let gaps = run.gaps(&inputs.equivalents);
        if !gaps.is_empty() {
            page.html("<ul>");
            for gap in gaps {
                page.html(&format!(
                    "<li class=\"miss\"><code>{}</code></li>",
                    esc(gap)
                ));
            }
            page.html("</ul>");
        }
    }
}
