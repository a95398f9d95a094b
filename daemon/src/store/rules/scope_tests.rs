use super::*;
use serde_json::json;

fn s(globs: &[&str]) -> Vec<String> {
    globs.iter().map(|g| g.to_string()).collect()
}

#[test]
fn literal_paths_overlap_when_equal_or_one_contains_the_other() {
    assert!(globs_overlap("src/a.py", "src/a.py"));
    assert!(globs_overlap("src", "src/a.py"));
    assert!(globs_overlap("src/parser/", "src/parser/lex.rs"));
    assert!(globs_overlap("./src//parser", "src/parser/x"));
    assert!(!globs_overlap("src/a.py", "src/b.py"));
    assert!(!globs_overlap("src/parser/a", "tests/parser/a"));
    assert!(!globs_overlap("src", "srcs"));
}

#[test]
fn a_wildcard_component_may_match_anything_from_there_on() {
    assert!(globs_overlap("src/parser/**", "src/parser/lex.rs"));
    assert!(globs_overlap("src/**", "src/parser/deep/x.rs"));
    assert!(globs_overlap("src/*.py", "src/a.py"));
    assert!(globs_overlap("src/a?.py", "src/ab.py"));
    assert!(globs_overlap("src/[ab].py", "src/c.py"), "conservative");
    assert!(globs_overlap("src/{a,b}/x", "src/c/x"), "conservative");
    assert!(globs_overlap("**", "anything/at/all"));
    assert!(!globs_overlap("src/parser/**", "tests/test_parser.py"));
    assert!(!globs_overlap("src/*/x", "tests/a/x"));
}

#[test]
fn the_root_overlaps_everything() {
    assert!(globs_overlap(".", "src/a.py"));
    assert!(globs_overlap("./", "tests"));
}

#[test]
fn scopes_overlap_when_any_pair_does_and_the_pair_is_named() {
    let a = s(&["src/parser/**", "tests/test_parser.py"]);
    let b = s(&["docs", "tests/test_parser.py"]);
    assert_eq!(
        first_overlap(&a, &b),
        Some(("tests/test_parser.py".into(), "tests/test_parser.py".into()))
    );
    assert_eq!(first_overlap(&a, &s(&["docs", "src/lexer"])), None);
    let held = vec![
        Held {
            id: "T-1".into(),
            holder: Some("w1".into()),
            globs: s(&["docs"]),
        },
        Held {
            id: "T-2".into(),
            holder: Some("w2".into()),
            globs: s(&["src/**"]),
        },
    ];
    let c = conflict(&a, &held).unwrap();
    assert_eq!(
        (c.held.id.as_str(), c.glob.as_str(), c.held_glob.as_str()),
        ("T-2", "src/parser/**", "src/**")
    );
    assert!(conflict(&s(&["README.md"]), &held).is_none());
    assert!(
        conflict(&[], &held).is_none(),
        "an empty scope overlaps nothing"
    );
}

#[test]
fn a_scope_is_read_only_from_a_list_of_strings() {
    assert_eq!(
        of_metadata(r#"{"scope":["a","b/*"]}"#),
        Some(s(&["a", "b/*"]))
    );
    assert_eq!(of_metadata(r#"{"project":"x"}"#), None);
    assert_eq!(of_metadata(r#"{"scope":"src"}"#), None);
    assert_eq!(of_metadata(r#"{"scope":[1]}"#), None);
    assert_eq!(of_metadata(r#"{"x":{"scope":["a"]}}"#), None);
}

#[test]
fn bad_scopes_are_refused_with_the_field_named() {
    let ok = json!({"scope": ["src/parser/**", "./tests/", "."]});
    assert!(check_metadata("metadata", &ok).is_ok());
    assert!(check_metadata("metadata", &json!({"scope": null})).is_ok());
    assert!(check_metadata("metadata", &json!({})).is_ok());
    for (bad, field) in [
        (json!({"scope": "src"}), "metadata.scope"),
        (json!({"scope": [""]}), "metadata.scope[0]"),
        (json!({"scope": ["a", 3]}), "metadata.scope[1]"),
        (json!({"scope": ["/etc/passwd"]}), "metadata.scope[0]"),
        (json!({"scope": ["src/../../x"]}), "metadata.scope[0]"),
        (json!({"scope": [".."]}), "metadata.scope[0]"),
        (json!({"scope": ["a\nb"]}), "metadata.scope[0]"),
        (
            json!({"scope": ["x".repeat(MAX_GLOB_CHARS + 1)]}),
            "metadata.scope[0]",
        ),
        (json!({"scope": vec!["a"; MAX_GLOBS + 1]}), "metadata.scope"),
    ] {
        match check_metadata("metadata", &bad) {
            Err(StoreError::Invalid { field: f, .. }) => assert_eq!(f, field, "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn a_claim_admits_scoped_tasks_clear_of_the_held_ones_and_of_each_other() {
    let held = vec![Held {
        id: "T-1".into(),
        holder: Some("w1".into()),
        globs: s(&["src/a"]),
    }];
    let mut walk = Admission::new(held);
    assert!(
        walk.admit("T-2", r#"{"project":"x"}"#),
        "no scope: unconstrained"
    );
    assert!(!walk.passed_over);
    assert!(
        !walk.admit("T-3", r#"{"scope":["src/**"]}"#),
        "overlaps the held T-1"
    );
    assert!(walk.passed_over);
    assert!(walk.admit("T-4", r#"{"scope":["docs/x.md"]}"#));
    assert!(
        !walk.admit("T-5", r#"{"scope":["docs"]}"#),
        "overlaps T-4, admitted before"
    );
    assert!(walk.admit("T-6", r#"{"scope":[]}"#));
}
