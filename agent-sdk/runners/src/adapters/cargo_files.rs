//! Where cargo's results point: a unit test's module file, and the compiler's errors when the
//! build failed.

use crate::report::{Outcome, TestResult};
use std::collections::HashMap;
use std::path::Path;

/// Points each unit test at its module's own file (`src/lib.rs::text::tests::x` →
/// `src/text.rs`, or `src/text/mod.rs`), where a failure did not already say where it is.
pub fn module_files(project: &Path, tests: &mut [TestResult]) {
    let mut known: HashMap<String, Option<String>> = HashMap::new();
    for t in tests.iter_mut().filter(|t| t.lineno.is_none()) {
        let (Some(file), Some((root, path))) = (&t.file, t.nodeid.split_once("::")) else {
            continue;
        };
        if file != root || !root.ends_with(".rs") {
            continue;
        }
        let Some((module, _)) = path.rsplit_once("::") else {
            continue;
        };
        let key = format!("{root}::{module}");
        let found = known
            .entry(key)
            .or_insert_with(|| module_file(project, root, module));
        if let Some(f) = found {
            t.file = Some(f.clone());
        }
    }
}

/// The deepest existing file of `module` (`a::b`) below the crate root's directory.
fn module_file(project: &Path, root: &str, module: &str) -> Option<String> {
    let mut dir = Path::new(root).parent()?.to_path_buf();
    let mut found = None;
    for segment in module.split("::") {
        let file = dir.join(format!("{segment}.rs"));
        let mod_rs = dir.join(segment).join("mod.rs");
        if project.join(&file).is_file() {
            found = Some(file);
        } else if project.join(&mod_rs).is_file() {
            found = Some(mod_rs);
        } else {
            break;
        }
        dir = dir.join(segment);
    }
    found.map(|f| f.to_string_lossy().replace('\\', "/"))
}

/// The compiler's errors when the build failed, as one `[build]` error entry.
pub fn build_errors(stderr: &str) -> Option<TestResult> {
    if !stderr.contains("error: could not compile") {
        return None;
    }
    let mut text = String::new();
    let mut in_error = false;
    for line in stderr.lines() {
        if line.starts_with("error") {
            in_error = true;
        } else if line.starts_with("warning") || line.trim_start().starts_with("Compiling ") {
            in_error = false;
        }
        if in_error {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut t = TestResult::new("[build]", Outcome::Error);
    if let Some(loc) = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
    {
        let mut parts = loc.split(':');
        t.file = parts.next().map(str::to_string);
        t.lineno = parts.next().and_then(|l| l.parse().ok());
    }
    t.longrepr = Some(text.trim_end().to_string());
    Some(t)
}
