//! Where a JavaScript runner's real entry point is, whatever package manager installed it.
//! npm, yarn classic and yarn berry's node_modules linker make `node_modules/.bin/jest` a
//! symlink to a JavaScript file; pnpm makes it a `#!/bin/sh` shim that sets `NODE_PATH` and
//! execs node on the real file, so running the shim with `node` is a SyntaxError. huddle
//! resolves the package the way Node does (`node_modules/<package>` in the project or a parent,
//! which pnpm links into its store) and runs the file its `package.json` `bin` names; only when
//! no package is found does it fall back to `.bin/<name>`: a JavaScript file runs with node, a
//! shell shim is executed itself, as the package manager would run it.

use crate::error::RunnerError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How a runner is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// `node <script>`: the package's JavaScript entry point.
    Script(PathBuf),
    /// A shim that starts node itself (`node_modules/.bin/<name>` under pnpm), executed as is.
    Shim(PathBuf),
}

/// A resolved runner, and how it was found (for `--explain` and error messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What to start.
    pub entry: Entry,
    /// How it was found, in one sentence.
    pub how: String,
}

/// Finds `package`'s directory as Node's resolution would from `start`: the first
/// `node_modules/<package>` with a `package.json` in `start` or a parent.
pub fn package_dir(start: &Path, package: &str) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join("node_modules").join(package))
        .find(|dir| dir.join("package.json").is_file())
}

/// The file `bin` names in the `package.json` of `dir`: a string (the package's one command)
/// or an object keyed by command name.
fn bin_of(dir: &Path, package: &str, command: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let pkg: Value = serde_json::from_str(&text).ok()?;
    let rel = match pkg.get("bin")? {
        Value::String(s) if package.rsplit('/').next() == Some(command) => s.as_str(),
        Value::Object(map) => map.get(command)?.as_str()?,
        _ => return None,
    };
    let file = dir.join(rel.trim_start_matches("./"));
    file.is_file().then_some(file)
}

/// Whether `path` is a JavaScript file node can run (not a shell script).
fn is_javascript(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e == "js" || e == "mjs" || e == "cjs")
    {
        return true;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    !first.starts_with("#!") || first.contains("node")
}

/// The project's direct dependencies (all four kinds), by name: the packages that may bring a
/// runner in as their own dependency (a toolkit such as kcd-scripts).
pub fn direct_dependencies(project: &Path) -> Vec<String> {
    let Some(pkg) = std::fs::read_to_string(project.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    let mut names: Vec<String> = [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .filter_map(|k| pkg.get(k)?.as_object())
    .flat_map(|deps| deps.keys().cloned())
    .collect();
    names.dedup();
    names
}

/// The dependency of `project` through which `package` is installed (`kcd-scripts` for jest):
/// `package` resolves from that dependency's real directory as Node resolves it from inside.
pub fn installed_through(project: &Path, package: &str) -> Option<(String, PathBuf)> {
    direct_dependencies(project).into_iter().find_map(|dep| {
        let real = package_dir(project, &dep)?.canonicalize().ok()?;
        let dir = package_dir(&real, package)?;
        Some((dep, dir))
    })
}

/// The (major, minor) version of the `package` the project resolves, and the manifest it was
/// read from (named in messages): what decides which options the installed runner accepts.
pub fn installed_version(project: &Path, package: &str) -> (Option<(u64, u64)>, PathBuf) {
    let manifest = package_dir(project, package)
        .or_else(|| installed_through(project, package).map(|(_, dir)| dir))
        .map_or_else(PathBuf::new, |dir| dir.join("package.json"));
    let version = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|pkg| pkg.get("version")?.as_str().map(str::to_string))
        .and_then(|v| {
            let mut parts = v.split('.').map(|p| p.parse::<u64>().ok());
            Some((parts.next()??, parts.next()??))
        });
    (version, manifest)
}

/// Resolves `command` of `package` for a project in `project`: the package itself, else the
/// package installed through one of the project's dependencies, else the `.bin` entry.
pub fn resolve(project: &Path, package: &str, command: &str) -> Result<Resolved, RunnerError> {
    if let Some(dir) = package_dir(project, package) {
        if let Some(script) = bin_of(&dir, package, command) {
            return Ok(Resolved {
                how: format!(
                    "{} (the `bin` of {})",
                    script.display(),
                    dir.join("package.json").display()
                ),
                entry: Entry::Script(script),
            });
        }
    }
    if let Some((wrapper, dir)) = installed_through(project, package) {
        if let Some(script) = bin_of(&dir, package, command) {
            return Ok(Resolved {
                how: format!("{} (installed through {wrapper})", script.display()),
                entry: Entry::Script(script),
            });
        }
    }
    if let Some(shim) = crate::tools::node_bin(project, command) {
        let entry = match shim.canonicalize() {
            Ok(real) if is_javascript(&real) => Entry::Script(real),
            _ => Entry::Shim(shim.clone()),
        };
        let how = match &entry {
            Entry::Script(s) => format!("{} (linked from {})", s.display(), shim.display()),
            Entry::Shim(_) => format!(
                "{} (a shell shim, run as the package manager would)",
                shim.display()
            ),
        };
        return Ok(Resolved { entry, how });
    }
    if let Some(pnp) = project
        .ancestors()
        .map(|d| d.join(".pnp.cjs"))
        .find(|p| p.is_file())
    {
        return Err(RunnerError::MissingTool {
            tool: command.to_string(),
            hint: format!(
                "{} is a yarn Plug'n'Play install, which has no node_modules for huddle to run \
                 {command} from: set `nodeLinker: node-modules` in .yarnrc.yml and run `yarn install`",
                pnp.display()
            ),
        });
    }
    Err(crate::tools::missing(command, project))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_package_bin_wins_over_a_pnpm_shell_shim() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            &root.join("node_modules/vitest/package.json"),
            r#"{"bin": {"vitest": "./vitest.mjs"}}"#,
        );
        write(&root.join("node_modules/vitest/vitest.mjs"), "export {}\n");
        write(
            &root.join("node_modules/.bin/vitest"),
            "#!/bin/sh\nexec node \"$basedir/../vitest/vitest.mjs\" \"$@\"\n",
        );
        let project = root.join("packages/app");
        std::fs::create_dir_all(&project).unwrap();
        let found = resolve(&project, "vitest", "vitest").unwrap();
        assert_eq!(
            found.entry,
            Entry::Script(root.join("node_modules/vitest/vitest.mjs"))
        );
    }

    #[test]
    fn a_string_bin_and_a_wrapper_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            &root.join("node_modules/kcd-scripts/package.json"),
            r#"{"bin": "./dist/index.js"}"#,
        );
        write(
            &root.join("node_modules/kcd-scripts/node_modules/jest/package.json"),
            r#"{"bin": "./bin/jest.js"}"#,
        );
        write(
            &root.join("node_modules/kcd-scripts/node_modules/jest/bin/jest.js"),
            "",
        );
        write(
            &root.join("package.json"),
            r#"{"devDependencies": {"kcd-scripts": "1"}}"#,
        );
        let found = resolve(root, "jest", "jest").unwrap();
        let Entry::Script(script) = found.entry else {
            panic!("expected a script: {found:?}")
        };
        assert!(
            script.ends_with("node_modules/jest/bin/jest.js"),
            "{script:?}"
        );
        assert!(found.how.contains("through kcd-scripts"), "{}", found.how);
    }

    #[test]
    fn a_shell_shim_without_its_package_is_run_itself() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("node_modules/.bin/jest");
        write(&shim, "#!/bin/sh\nexec node \"$basedir/x.js\" \"$@\"\n");
        let found = resolve(dir.path(), "jest", "jest").unwrap();
        assert_eq!(found.entry, Entry::Shim(shim));
    }

    #[test]
    fn plug_n_play_says_which_linker_to_use() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join(".pnp.cjs"), "");
        let err = resolve(dir.path(), "jest", "jest").unwrap_err();
        assert!(
            err.to_string().contains("nodeLinker: node-modules"),
            "{err}"
        );
    }
}
