use super::*;
use serde_json::json;

const FIX: &str = r#"{"edits":[{"path":"a.py","search":"x = 1","replace":"x = 2"}],"explanation":"off by one","cannot_fix":null}"#;

fn content(text: &str) -> ChatReply {
    ChatReply {
        content: Some(text.into()),
        ..Default::default()
    }
}

#[test]
fn completions_are_read_leniently() {
    let body = json!({"choices":[{"finish_reason":"stop","message":{"content":null,"tool_calls":[
        {"type":"function","function":{"name":"apply_edits","arguments":{"edits":[]}}}]}}]});
    let r = parse_completion(&body).unwrap();
    assert_eq!(r.tool_arguments, vec![r#"{"edits":[]}"#.to_string()]);
    assert_eq!(r.usage, None);
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    let body = json!({"choices":[{"message":{"content":[{"type":"text","text":"hi"}]}}],"usage":{"prompt_tokens":3,"completion_tokens":4}});
    let r = parse_completion(&body).unwrap();
    assert_eq!(r.content.as_deref(), Some("hi"));
    assert_eq!(r.usage.unwrap().total_tokens, 7);
    assert!(parse_completion(&json!({"choices":[]})).is_err());
}

#[test]
fn json_in_content_fences_or_tool_arguments_is_a_fix() {
    for reply in [
        content(FIX),
        content(&format!("```json\n{FIX}\n```")),
        content(&format!("Here is the fix:\n{FIX}")),
        ChatReply {
            tool_arguments: vec![FIX.into()],
            content: Some(String::new()),
            ..Default::default()
        },
    ] {
        let fix = parse_fix(&reply).unwrap();
        assert_eq!(fix.edits[0].replace, "x = 2");
        assert_eq!(fix.explanation, "off by one");
    }
}

#[test]
fn malformed_json_is_refused_with_the_parse_error() {
    let e = parse_fix(&content(r#"{"edits": [{"path": "a.py", "search": "#)).unwrap_err();
    assert!(e.starts_with("the reply was not valid JSON"), "{e}");
    let e = parse_fix(&content("I think the bug is in line 3.")).unwrap_err();
    assert!(e.contains("neither"), "{e}");
}

#[test]
fn search_replace_blocks_are_the_fallback() {
    let text = "Fix:\n\npkg/calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n";
    let fix = parse_fix(&content(text)).unwrap();
    assert_eq!(
        fix.edits,
        vec![Edit {
            path: "pkg/calc.py".into(),
            search: "    return a - b\n".into(),
            replace: "    return a + b\n".into()
        }]
    );
}

#[test]
fn cannot_fix_given_as_a_string_is_the_reason() {
    let fix = parse_fix(&content(
        r#"{"edits":[],"explanation":"","cannot_fix":"the test expects the wrong value"}"#,
    ))
    .unwrap();
    assert_eq!(
        fix.cannot_fix,
        Some(("other".into(), "the test expects the wrong value".into()))
    );
}

#[test]
fn cannot_fix_is_read() {
    let fix = parse_fix(&content(r#"{"edits":[],"explanation":"","cannot_fix":{"category":"environment","reason":"redis is down"}}"#)).unwrap();
    assert_eq!(
        fix.cannot_fix,
        Some(("environment".into(), "redis is down".into()))
    );
}
