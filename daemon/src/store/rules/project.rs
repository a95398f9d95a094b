//! Which tasks a claim filtered by project may take. A task names its project with metadata
//! `project` (a string; the name the test history keeps its runs under). A claim that names a
//! project takes that project's tasks and tasks that name none; with `strict`, only that
//! project's. A claim that names no project takes tasks of every project.

use super::validate;
pub use crate::hub::ProjectFilter;
use crate::store::error::StoreError;
use huddle_wire::limits::MAX_PROJECT_CHARS;

/// Whether a claim with `filter` may take a task of `project`.
pub fn admits(filter: Option<&ProjectFilter>, project: Option<&str>) -> bool {
    filter.is_none_or(|f| f.admits(project))
}

/// A task's project: its metadata `project` when that is a string (the backends' claim queries
/// read it the same way).
pub fn of_metadata(metadata: &serde_json::Value) -> Option<String> {
    metadata.get("project")?.as_str().map(str::to_string)
}

/// A project name: 1–200 characters without control characters (a name is one line of the
/// replicas' wake-up notices).
pub fn check_name(field: &str, name: &str) -> Result<(), StoreError> {
    validate::text(field, name, MAX_PROJECT_CHARS)?;
    if name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            field,
            format!("`{field}` must not hold control characters"),
        ));
    }
    Ok(())
}

/// A task's metadata `project`, when present, is a project name (so a claim can match it).
pub fn check_metadata(field: &str, metadata: &serde_json::Value) -> Result<(), StoreError> {
    match metadata.get("project") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(name)) => check_name(&format!("{field}.project"), name),
        Some(_) => Err(StoreError::invalid(
            &format!("{field}.project"),
            format!("`{field}.project` must be a string, the project's name"),
        )),
    }
}

/// A claim's `project` and `strictProject`.
pub fn claim_filter(name: Option<&str>, strict: bool) -> Result<Option<ProjectFilter>, StoreError> {
    let Some(name) = name else {
        if strict {
            return Err(StoreError::invalid(
                "strictProject",
                "`strictProject` needs a `project` to be strict about",
            ));
        }
        return Ok(None);
    };
    check_name("project", name)?;
    Ok(Some(ProjectFilter {
        name: name.to_string(),
        strict,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_project_filter_takes_its_project_and_unnamed_tasks_unless_strict() {
        let loose = claim_filter(Some("calc"), false).unwrap();
        let strict = claim_filter(Some("calc"), true).unwrap();
        assert!(admits(loose.as_ref(), Some("calc")) && admits(loose.as_ref(), None));
        assert!(!admits(loose.as_ref(), Some("shop")));
        assert!(admits(strict.as_ref(), Some("calc")) && !admits(strict.as_ref(), None));
        assert!(admits(None, Some("shop")) && admits(None, None));
    }

    #[test]
    fn only_a_string_names_a_project() {
        assert_eq!(
            of_metadata(&json!({"project": "calc"})).as_deref(),
            Some("calc")
        );
        assert_eq!(of_metadata(&json!({"project": 5})), None);
        assert_eq!(of_metadata(&json!({})), None);
    }

    #[test]
    fn a_task_project_must_be_a_name() {
        assert!(check_metadata("metadata", &json!({"project": "calc", "x": 1})).is_ok());
        assert!(check_metadata("metadata", &json!({"project": null})).is_ok());
        assert!(check_metadata("metadata", &json!({"project": 5})).is_err());
        assert!(check_metadata("metadata", &json!({"project": "a\tb"})).is_err());
        assert!(check_metadata("metadata", &json!({"project": ""})).is_err());
    }

    #[test]
    fn bad_filters_are_refused() {
        assert!(claim_filter(Some(""), false).is_err());
        assert!(claim_filter(Some(&"x".repeat(201)), false).is_err());
        assert!(claim_filter(Some("a\nb"), false).is_err());
        assert!(claim_filter(None, true).is_err());
        assert!(claim_filter(Some(&"é".repeat(200)), true).is_ok());
    }
}
