//! Turns each Rust code block of the READMEs into a module of the `readmes` test, with a test
//! that runs it. A block must be a whole program (a `main`), as a reader would copy it.
//!
//! Three calls are routed to the test's own servers, each spelled as the README spells it, so
//! that no block needs a line its reader does not see: `redis::Client::open`,
//! `redis::cluster::ClusterClient::new` and `tokio::net::TcpListener::bind` become the
//! harness's `client`, `cluster_client` and `bind` (`tests/readmes/harness.rs`), which
//! connect to the test's server, cluster and port instead of the addresses in the README.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

/// The READMEs whose blocks run here, by the name their tests carry.
const READMES: [(&str, &str); 2] = [("root", "../README.md"), ("redis", "../redis/README.md")];

/// What the harness puts in place of each call that reaches a server or a port.
const ROUTED: [(&str, &str); 3] = [
    ("redis::Client::open(", "crate::harness::client("),
    (
        "redis::cluster::ClusterClient::new(",
        "crate::harness::cluster_client(",
    ),
    ("tokio::net::TcpListener::bind(", "crate::harness::bind("),
];

/// A fenced Rust block: where it starts, the section it is in, its text.
struct Block {
    line: usize,
    heading: String,
    text: String,
}

fn main() {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut code = String::new();
    for (readme, path) in READMES {
        println!("cargo::rerun-if-changed={path}");
        let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("reading {path}: {err}"));
        for block in blocks(&text) {
            write_block(&mut code, readme, path, &block);
        }
    }
    fs::write(Path::new(&out).join("snippets.rs"), code).expect("writing the snippets");
}

/// The Rust blocks of `text` (fenced, with an info string that begins with `rust`), each with the
/// heading above it.
fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut heading = String::new();
    let mut open: Option<Block> = None;
    // Inside a fenced block of another language, whose lines are not headings.
    let mut other = false;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        if let Some(block) = open.as_mut() {
            if fence {
                found.extend(open.take());
            } else {
                block.text.push_str(line);
                block.text.push('\n');
            }
        } else if other {
            other = !fence;
        } else if line.starts_with("```rust") {
            open = Some(Block {
                line: index + 1,
                heading: heading.clone(),
                text: String::new(),
            });
        } else if fence {
            other = true;
        } else if line.starts_with('#') {
            line.trim_start_matches('#').trim().clone_into(&mut heading);
        }
    }
    assert!(open.is_none(), "a ```rust block is never closed");
    found
}

fn write_block(code: &mut String, readme: &str, path: &str, block: &Block) {
    let name = format!("{readme}_line_{}", block.line);
    assert!(
        block.text.contains("fn main("),
        "{path} line {}: a Rust block must be a whole program, with a `main`",
        block.line
    );
    let mut text = block.text.clone();
    for (call, routed) in ROUTED {
        text = text.replace(call, routed);
    }
    let served = block.text.contains("axum::serve(");
    assert!(
        !served || block.text.contains("tokio::net::TcpListener::bind("),
        "{path} line {}: a block that serves must bind with tokio::net::TcpListener::bind",
        block.line
    );
    let run = if served { "serve" } else { "run" };
    // The test sits in the block's module, where its private `main` is visible. A block's
    // `use ...::redis` is left unused where its calls were routed.
    let _ = write!(
        code,
        "/// {path}, line {line}: \"{heading}\".\n\
         #[allow(unused_imports, clippy::all, clippy::pedantic)]\n\
         mod {name} {{\n{text}\n\
         #[test]\n\
         fn runs_as_written() {{\n    \
             crate::harness::{run}(&crate::harness::Block {{ readme: {path:?}, line: {line}, text: {original:?} }}, main);\n\
         }}\n\
         }}\n\n",
        line = block.line,
        heading = block.heading.replace('"', "'"),
        original = block.text,
    );
}
