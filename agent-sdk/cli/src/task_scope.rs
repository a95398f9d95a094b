//! `huddle task add --scope-from-tests`: a task's metadata `scope` derived from the test files
//! in its `paths` (the files and the code named after them, found in a checkout), so that the
//! daemon keeps overlapping tasks apart.

/// `metadata` with its `scope` derived from its `paths` (test files) in `checkout`.
pub fn from_tests(
    metadata: Option<serde_json::Value>,
    checkout: &std::path::Path,
) -> Result<serde_json::Value, String> {
    let mut metadata = metadata.unwrap_or_else(|| serde_json::json!({}));
    let Some(object) = metadata.as_object_mut() else {
        return Err("--metadata must be a JSON object".into());
    };
    if object.contains_key("scope") {
        return Err("give metadata `scope` or --scope-from-tests, not both".into());
    }
    let tests: Vec<String> = object
        .get("paths")
        .and_then(serde_json::Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if tests.is_empty() {
        return Err(
            "--scope-from-tests reads the test files in metadata `paths`: give some".into(),
        );
    }
    if !checkout.is_dir() {
        return Err(format!(
            "--scope-from-tests {}: no such directory",
            checkout.display()
        ));
    }
    let scope = huddle_sdk::roles::scope_of_tests(checkout, &tests);
    object.insert("scope".into(), scope.into());
    Ok(metadata)
}
