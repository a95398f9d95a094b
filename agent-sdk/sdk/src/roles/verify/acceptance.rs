//! Acceptance tests the worker never shows its model: task metadata
//! `acceptance: {"ref": "<git revision>", "paths": ["tests/acceptance/…"]}` names files in the
//! project's repository that are not in its working tree. They are read from git only into the
//! verdict's clean copy, never into the checkout the fix is made in nor into a prompt, and run
//! there beside the original tests; their results are reported apart.

use super::git;
use serde_json::Value;
use std::path::Path;

/// Most acceptance files one task may bring (each at most [`MAX_FILE_BYTES`]).
const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: usize = 1 << 20;

/// The task's acceptance tests, as named in its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Acceptance {
    /// The git revision they are read from.
    pub rev: String,
    /// Files or directories in that revision.
    pub paths: Vec<String>,
}

impl Acceptance {
    /// From the task's metadata: `None` without `acceptance`, an error when it is malformed.
    pub fn from_metadata(metadata: &Value) -> Result<Option<Acceptance>, String> {
        let Some(a) = metadata.get("acceptance") else {
            return Ok(None);
        };
        let bad = |why: &str| {
            Err(format!(
                "task metadata `acceptance` must be {{\"ref\": \"<git revision>\", \"paths\": \
                 [\"<file or directory>\", …]}}: {why}"
            ))
        };
        let Some(rev) = a.get("ref").and_then(Value::as_str) else {
            return bad("`ref` is missing");
        };
        if rev.is_empty() || rev.starts_with('-') {
            return bad("`ref` is not a revision");
        }
        let paths: Vec<String> = match a.get("paths").and_then(Value::as_array) {
            Some(list) => list
                .iter()
                .filter_map(Value::as_str)
                .map(|p| p.trim_start_matches("./").to_string())
                .collect(),
            None => return bad("`paths` is missing"),
        };
        if paths.is_empty() {
            return bad("`paths` is empty");
        }
        if let Some(p) = paths
            .iter()
            .find(|p| p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == ".."))
        {
            return bad(&format!("path {p:?} is not inside the project"));
        }
        Ok(Some(Acceptance {
            rev: rev.to_string(),
            paths,
        }))
    }

    /// Writes the acceptance files into `copy` (read from `project`'s repository) and answers
    /// their paths. A file that is already in the copy is an error: an acceptance test may not
    /// replace one of the project's.
    pub async fn write_into(&self, project: &Path, copy: &Path) -> Result<Vec<String>, String> {
        let mut args = vec![
            "ls-tree",
            "-r",
            "--name-only",
            "-z",
            self.rev.as_str(),
            "--",
        ];
        args.extend(self.paths.iter().map(String::as_str));
        let listed = git(project, &args).await.map_err(|e| {
            format!(
                "the acceptance tests cannot be listed from `{}`: {e}",
                self.rev
            )
        })?;
        let files: Vec<String> = listed
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        if files.is_empty() {
            return Err(format!(
                "`{}` holds no file under {}",
                self.rev,
                self.paths.join(", ")
            ));
        }
        if files.len() > MAX_FILES {
            return Err(format!(
                "`{}` holds {} acceptance files; at most {MAX_FILES} are run",
                self.rev,
                files.len()
            ));
        }
        for rel in &files {
            let to = copy.join(rel);
            if to.symlink_metadata().is_ok() {
                return Err(format!(
                    "acceptance test {rel} is also a file of the project; name acceptance tests \
                     the project does not have"
                ));
            }
            let spec = format!("{}:{rel}", self.rev);
            let content = git(project, &["show", spec.as_str()])
                .await
                .map_err(|e| format!("reading acceptance test {rel}: {e}"))?;
            if content.len() > MAX_FILE_BYTES {
                return Err(format!(
                    "acceptance test {rel} is over {MAX_FILE_BYTES} bytes"
                ));
            }
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&to, content).map_err(|e| format!("{rel}: {e}"))?;
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_read_and_bad_forms_are_named() {
        assert_eq!(Acceptance::from_metadata(&json!({})), Ok(None));
        let a = Acceptance::from_metadata(
            &json!({"acceptance": {"ref": "hidden", "paths": ["./tests/acc"]}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(a.rev, "hidden");
        assert_eq!(a.paths, ["tests/acc"]);
        for bad in [
            json!({"acceptance": {"paths": ["x"]}}),
            json!({"acceptance": {"ref": "--output=x", "paths": ["x"]}}),
            json!({"acceptance": {"ref": "h", "paths": []}}),
            json!({"acceptance": {"ref": "h", "paths": ["../x"]}}),
        ] {
            let err = Acceptance::from_metadata(&bad).unwrap_err();
            assert!(err.contains("`acceptance`"), "{err}");
        }
    }
}
