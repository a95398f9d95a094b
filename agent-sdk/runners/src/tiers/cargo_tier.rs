//! What a cargo project's tiers need beyond the shared conventions: its test files (`src/`
//! files with `#[test]`, proptest or doc tests, and `tests/*.rs` targets) and whether a file
//! has doc tests, which the unit tier runs with `cargo test --doc` (nextest cannot, and
//! `--lib` leaves them out).

use super::classify::read_head;
use std::path::Path;

/// A cargo project's test files, sorted.
pub fn test_files(project: &Path) -> Vec<String> {
    let mut found = Vec::new();
    collect_rs(project, "src", &mut found);
    found.retain(|f| {
        let text = read_head(&project.join(f));
        text.contains("#[test]")
            || text.contains("proptest!")
            || (is_library_file(f) && has_doc_tests(&text))
    });
    if let Ok(entries) = std::fs::read_dir(project.join("tests")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".rs") && e.path().is_file() {
                found.push(format!("tests/{name}"));
            }
        }
    }
    found.sort();
    found
}

/// Whether a library file's doc comments hold a code block rustdoc runs as a test: a fence
/// with no language, or `rust` and rustdoc's test attributes (`ignore` and `no_run` ones are
/// still reported). A binary's (`src/main.rs`, `src/bin/`) never run.
pub fn has_doc_tests(text: &str) -> bool {
    // Fences alternate: an opening one carries the language, its closing one nothing.
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim_start();
        let Some(doc) = line
            .strip_prefix("///")
            .or_else(|| line.strip_prefix("//!"))
        else {
            continue;
        };
        let Some(info) = doc.trim_start().strip_prefix("```") else {
            continue;
        };
        if inside {
            inside = false;
            continue;
        }
        inside = true;
        let runs = info.split(',').map(str::trim).all(|attr| {
            attr.is_empty()
                || attr == "rust"
                || attr.starts_with("edition")
                || matches!(
                    attr,
                    "ignore" | "no_run" | "should_panic" | "compile_fail" | "test_harness"
                )
        });
        if runs {
            return true;
        }
    }
    false
}

/// Whether a test file of the unit tier is the library's (so its doc tests can run).
pub fn is_library_file(file: &str) -> bool {
    file.starts_with("src/") && file != "src/main.rs" && !file.starts_with("src/bin/")
}

fn collect_rs(project: &Path, rel: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(project.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let path = format!("{rel}/{}", e.file_name().to_string_lossy());
        match e.file_type() {
            Ok(t) if t.is_dir() => collect_rs(project, &path, found),
            Ok(t) if t.is_file() && path.ends_with(".rs") => found.push(path),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_tests_are_rust_fences_in_doc_comments() {
        assert!(has_doc_tests("/// ```\n/// assert!(true);\n/// ```\n"));
        assert!(has_doc_tests("//! ```rust,no_run\n"));
        assert!(has_doc_tests("    /// ```should_panic\n"));
        assert!(!has_doc_tests("/// ```text\n/// not code\n/// ```\n"));
        assert!(!has_doc_tests("/// ```json\n"));
        assert!(has_doc_tests(
            "/// ```text\n/// x\n/// ```\n/// ```\n/// f();\n/// ```\n"
        ));
        assert!(
            !has_doc_tests("// ```\n"),
            "a plain comment is not a doc comment"
        );
        assert!(!has_doc_tests("/// Adds. No example.\n"));
    }
}
