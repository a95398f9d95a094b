//! `clients/typescript`: compiled with `tsc` (the result must equal the committed `dist/`) and
//! its own `node:test` suite run against real
//! daemons (the suite starts `huddled` itself), from a copy of the package that uses the
//! packages `npm ci` installed (scripts/install-test-deps).

use crate::support::{copy_package, repo, run_ok};
use huddle_tests::process::huddled_binary;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_builds_and_passes_its_tests() {
    let dir = tempfile::tempdir().unwrap();
    let package = copy_package(dir.path());
    std::fs::remove_dir_all(package.join("dist")).unwrap(); // built anew by `npm test`
    let mut npm = tokio::process::Command::new("npm");
    npm.args(["test", "--silent"])
        .current_dir(&package)
        .env("HUDDLED", huddled_binary().expect("huddled is built"));
    let out = run_ok(npm, "npm test in clients/typescript", 600).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let count = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# {key} ")))
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or_else(|| panic!("no `# {key}` line in:\n{text}"))
    };
    assert!(count("pass") > 0, "tests ran");
    assert_eq!(count("fail"), 0);
    assert_eq!(count("skipped"), 0);
    assert!(repo().join("clients/typescript/package.json").exists());
    // `dist/` is committed (so the package installs without a compiler): it must be what
    // `src/` compiles to.
    for entry in std::fs::read_dir(package.join("dist")).unwrap().flatten() {
        let name = entry.file_name();
        let committed = repo().join("clients/typescript/dist").join(&name);
        assert!(
            std::fs::read(&committed).ok() == std::fs::read(entry.path()).ok(),
            "clients/typescript/dist/{} is not what src/ compiles to: run `npm run build` there",
            name.to_string_lossy()
        );
    }
    let committed = std::fs::read_dir(repo().join("clients/typescript/dist"))
        .unwrap()
        .count();
    let built = std::fs::read_dir(package.join("dist")).unwrap().count();
    assert_eq!(
        committed, built,
        "clients/typescript/dist has files src/ no longer makes"
    );
}
