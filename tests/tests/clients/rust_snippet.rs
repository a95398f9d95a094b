//! agent-sdk/README.md's `[dependencies]` snippet: a new crate made of exactly that snippet
//! (the path pointing at this checkout) and `examples/worker.rs` as its `main.rs` compiles.

use crate::support::{code_block, repo, run_ok};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_snippet_builds_the_worker_example() {
    let readme = std::fs::read_to_string(repo().join("agent-sdk/README.md")).unwrap();
    let snippet = code_block(&readme, "<!-- snippet:", "toml");
    let sdk = repo().join("agent-sdk/sdk");
    let snippet = snippet.replace("../huddle/agent-sdk/sdk", sdk.to_str().unwrap());
    assert!(
        snippet.contains(sdk.to_str().unwrap()),
        "the snippet depends on huddle-sdk by path"
    );
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "[package]\nname = \"my-worker\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{snippet}\n[workspace]\n"
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::copy(
        repo().join("agent-sdk/sdk/examples/worker.rs"),
        dir.path().join("src/main.rs"),
    )
    .unwrap();
    // The workspace's lockfile: the same versions as the tested build, and no network.
    std::fs::copy(repo().join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut check = tokio::process::Command::new(cargo);
    check
        .args(["check", "--quiet", "--offline"])
        .current_dir(dir.path())
        // Its own directory under target/, kept between runs so only the first one is slow.
        .env("CARGO_TARGET_DIR", repo().join("target/sdk-snippet"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("CARGO_") && key != "CARGO_HOME" {
            check.env_remove(&key);
        }
    }
    check.env("CARGO_TARGET_DIR", repo().join("target/sdk-snippet"));
    run_ok(check, "cargo check of the README snippet", 1200).await;
}
