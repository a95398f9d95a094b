//! `--affected` for go follows the import graph: a changed file affects its package and every
//! package of the module that imports it, directly or through others (tests' imports
//! included), as `go list` reports them. A test in an importer can fail because of the change
//! just as the package's own tests can; running only the changed package would hide that.

use serde::Deserialize;
use std::collections::{HashMap, VecDeque};
use std::path::Path;

#[derive(Deserialize)]
struct Package {
    #[serde(rename = "ImportPath")]
    import_path: String,
    #[serde(rename = "Dir")]
    dir: String,
    #[serde(rename = "Imports", default)]
    imports: Vec<String>,
    #[serde(rename = "TestImports", default)]
    test_imports: Vec<String>,
    #[serde(rename = "XTestImports", default)]
    x_test_imports: Vec<String>,
}

/// The module's packages, by directory relative to the project (`./calc`), with their
/// importers: the reverse of `go list`'s import lists.
pub struct ImportGraph {
    /// Package directory → its import path.
    paths: HashMap<String, String>,
    /// Import path → directory.
    dirs: HashMap<String, String>,
    /// Import path → the module's packages importing it.
    importers: HashMap<String, Vec<String>>,
}

impl ImportGraph {
    /// Reads the graph with `go list -e -json ./...` in `project`; the error says why not.
    pub fn read(project: &Path) -> Result<Self, String> {
        let out = std::process::Command::new("go")
            .args([
                "list",
                "-e",
                "-json=ImportPath,Dir,Imports,TestImports,XTestImports",
                "./...",
            ])
            .current_dir(project)
            .output()
            .map_err(|e| format!("cannot run `go list` ({e})"))?;
        if !out.status.success() {
            return Err(format!(
                "`go list ./...` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let root = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf());
        let mut graph = ImportGraph {
            paths: HashMap::new(),
            dirs: HashMap::new(),
            importers: HashMap::new(),
        };
        let stream = serde_json::Deserializer::from_slice(&out.stdout).into_iter::<Package>();
        for p in stream {
            let p = p.map_err(|e| format!("cannot read `go list` output ({e})"))?;
            let rel = Path::new(&p.dir)
                .strip_prefix(&root)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            let dir = if rel.is_empty() {
                ".".to_string()
            } else {
                format!("./{rel}")
            };
            for imported in p
                .imports
                .iter()
                .chain(&p.test_imports)
                .chain(&p.x_test_imports)
            {
                let list = graph.importers.entry(imported.clone()).or_default();
                if !list.contains(&p.import_path) && *imported != p.import_path {
                    list.push(p.import_path.clone());
                }
            }
            graph.dirs.insert(p.import_path.clone(), dir.clone());
            graph.paths.insert(dir, p.import_path);
        }
        Ok(graph)
    }

    /// The package in `dir` and every package that imports it, transitively, as directories
    /// (`dir` first); `None` when `dir` is no package of the module.
    pub fn affected_by(&self, dir: &str) -> Option<Vec<String>> {
        let start = self.paths.get(dir)?;
        let mut seen = vec![start.clone()];
        let mut queue = VecDeque::from([start.clone()]);
        while let Some(path) = queue.pop_front() {
            for importer in self.importers.get(&path).into_iter().flatten() {
                if !seen.contains(importer) {
                    seen.push(importer.clone());
                    queue.push_back(importer.clone());
                }
            }
        }
        Some(
            seen.iter()
                .filter_map(|p| self.dirs.get(p).cloned())
                .collect(),
        )
    }
}
