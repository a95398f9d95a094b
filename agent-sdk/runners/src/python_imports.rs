//! `--affected` for pytest follows the import graph as well as test names: a changed module
//! affects every test file that imports it, directly or through other modules of the
//! project. Imports are read from the source (`import a.b`, `from a.b import c`, `from . import
//! c`), not run; a module is named from its path, from the project root and from `src/`.
//! Doctest text files (`docs/usage.rst`) take part as importers: their examples' import lines
//! (`>>> from pkg import x`) are read like a module's.

use regex::Regex;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::LazyLock;

/// The project's Python files and who imports whom.
pub struct ImportGraph {
    /// File → the files that import it.
    importers: HashMap<String, Vec<String>>,
}

/// `pkg/sub/mod.py` → `pkg.sub.mod`, `pkg/__init__.py` → `pkg`.
fn module_of(file: &str) -> String {
    let stem = file.strip_suffix(".py").unwrap_or(file);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}

/// The modules a file's import lines name (each `from a import b` gives `a` and `a.b`).
fn imported_modules(text: &str, file: &str) -> Vec<String> {
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)")
            .expect("valid regex")
    });
    static FROM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?m)^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|([\w \t,]+))",
        )
        .expect("valid regex")
    });
    let package = module_of(file);
    let package: Vec<&str> = if file.ends_with("/__init__.py") {
        package.split('.').collect()
    } else {
        package
            .split('.')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(Vec::new(), |(_, p)| p.to_vec())
    };
    let mut out = Vec::new();
    for c in IMPORT.captures_iter(text) {
        for part in c[1].split(',') {
            let name = part.split_whitespace().next().unwrap_or("");
            out.push(name.to_string());
        }
    }
    for c in FROM.captures_iter(text) {
        let raw = &c[1];
        let dots = raw.chars().take_while(|ch| *ch == '.').count();
        let rest = &raw[dots..];
        let base = if dots == 0 {
            rest.to_string()
        } else {
            let keep = package.len().saturating_sub(dots - 1);
            let mut parts: Vec<&str> = package[..keep].to_vec();
            if !rest.is_empty() {
                parts.push(rest);
            }
            parts.join(".")
        };
        let names = c.get(2).or_else(|| c.get(3)).map_or("", |m| m.as_str());
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.split_whitespace().next().unwrap_or(name);
            out.push(if base.is_empty() {
                name.to_string()
            } else {
                format!("{base}.{name}")
            });
        }
        out.push(base);
    }
    out
}

/// The code of a doctest text file's examples: each `>>> ` or `... ` line without its
/// prompt; prose lines are left out (a sentence may start with "import").
fn example_code(text: &str) -> String {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix(">>> ").or_else(|| l.strip_prefix("... "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl ImportGraph {
    /// Reads every file in `files` (relative to `project`): `.py` modules, and doctest text
    /// files, which import but are never imported.
    pub fn read(project: &Path, files: &[String]) -> Self {
        let mut by_module: HashMap<String, String> = HashMap::new();
        for f in files.iter().filter(|f| f.ends_with(".py")) {
            by_module.insert(module_of(f), f.clone());
            if let Some(inside) = f.strip_prefix("src/") {
                by_module.insert(module_of(inside), f.clone());
            }
        }
        let mut importers: HashMap<String, Vec<String>> = HashMap::new();
        for f in files {
            let Ok(mut text) = std::fs::read_to_string(project.join(f)) else {
                continue;
            };
            if !f.ends_with(".py") {
                text = example_code(&text);
            }
            for module in imported_modules(&text, f) {
                // `import a.b.c` also runs `a` and `a.b`; the deepest known module is the edge.
                let mut name = module.as_str();
                loop {
                    if let Some(target) = by_module.get(name) {
                        let list = importers.entry(target.clone()).or_default();
                        if target != f && !list.contains(f) {
                            list.push(f.clone());
                        }
                        break;
                    }
                    match name.rsplit_once('.') {
                        Some((parent, _)) => name = parent,
                        None => break,
                    }
                }
            }
        }
        ImportGraph { importers }
    }

    /// Every file that imports `file`, directly or through others, in breadth-first order.
    pub fn importers_of(&self, file: &str) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        let mut queue = VecDeque::from([file.to_string()]);
        while let Some(f) = queue.pop_front() {
            for importer in self.importers.get(&f).into_iter().flatten() {
                if importer != file && !seen.contains(importer) {
                    seen.push(importer.clone());
                    queue.push_back(importer.clone());
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_of_every_form_are_read() {
        let text = "import os, app.core as c\nfrom app.util import (fmt,\n    parse)\nfrom . import models\nfrom ..shared import x\n";
        let got = imported_modules(text, "app/api/views.py");
        for want in [
            "os",
            "app.core",
            "app.util.fmt",
            "app.util.parse",
            "app.util",
            "app.api.models",
            "app.shared.x",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} in {got:?}");
        }
    }

    #[test]
    fn a_text_files_examples_import_but_its_prose_does_not() {
        let text = "Import the module first:\n\nimport nothing here\n   >>> from shop.prices import gross\n   ... import os\n";
        assert_eq!(
            example_code(text),
            "from shop.prices import gross\nimport os"
        );
    }
}
