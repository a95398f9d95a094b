//! agent-sdk/README.md's `[dependencies]` snippet: the workspace member `agent-sdk/readme-worker`
//! is a crate made of exactly that snippet (the path pointing at this checkout) with
//! `examples/worker.rs` as its program. `./scripts/test` checks that crate alone (`cargo check -p
//! my-worker`); this test keeps it equal to the README, so the check is of what the README says.

use crate::support::{code_block, repo};

/// A manifest's `[dependencies]` table as its lines, without comments and blank lines.
fn dependency_lines(manifest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.split(" #").next().unwrap_or("").trim();
        if line.starts_with('[') && !line.starts_with("[[") && line.ends_with(']') {
            inside = line == "[dependencies]";
            continue;
        }
        if line.starts_with("[[") {
            inside = false;
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            lines.push(line.to_string());
        }
    }
    lines
}

#[test]
fn the_readme_snippet_is_the_checked_worker_crate() {
    let readme = std::fs::read_to_string(repo().join("agent-sdk/README.md")).unwrap();
    let snippet = code_block(&readme, "<!-- snippet:", "toml");
    assert!(
        snippet.contains("\"../huddle/agent-sdk/sdk\""),
        "the snippet depends on huddle-sdk by path:\n{snippet}"
    );
    // The README's path is relative to a project beside the checkout; the member's, to itself.
    let snippet = snippet.replace("\"../huddle/agent-sdk/sdk\"", "\"../sdk\"");
    let manifest =
        std::fs::read_to_string(repo().join("agent-sdk/readme-worker/Cargo.toml")).unwrap();
    let wanted = dependency_lines(&snippet);
    assert!(
        wanted.len() >= 2,
        "the snippet has its dependencies: {wanted:?}"
    );
    assert_eq!(
        dependency_lines(&manifest),
        wanted,
        "agent-sdk/readme-worker/Cargo.toml's [dependencies] are the README snippet's"
    );
    assert!(
        manifest.contains("path = \"../sdk/examples/worker.rs\""),
        "the checked crate's program is examples/worker.rs"
    );
    let workspace = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    assert!(
        workspace.contains("\"agent-sdk/readme-worker\""),
        "the crate is a workspace member, checked alone by ./scripts/test"
    );
    let script = std::fs::read_to_string(repo().join("scripts/test")).unwrap();
    assert!(
        script.contains("my-worker"),
        "./scripts/test checks my-worker alone"
    );
}

#[test]
fn dependency_lines_reads_only_the_dependencies_table() {
    let manifest = "[package]\nname = \"x\"\n\n[[bin]]\npath = \"a\"\n\n[dependencies]\n# c\na = \"1\"  # or b\n\nb = { path = \"p\" }\n[dev-dependencies]\nc = \"1\"\n";
    assert_eq!(
        dependency_lines(manifest),
        vec!["a = \"1\"".to_string(), "b = { path = \"p\" }".to_string()]
    );
}
