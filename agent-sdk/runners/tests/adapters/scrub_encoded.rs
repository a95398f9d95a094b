//! The scrubber on JSON, XML, bytes and files: secrets are found in the decoded strings even
//! when an escape splits them from their name or sits right before them, and the result is
//! still valid JSON or XML holding the same structure.

use crate::secrets::{failure_message, forbidden, leaks, pem, SECRETS};
use huddle_runners::junit::parse_junit;
use huddle_runners::scrub::{
    marker, scrub_bytes, scrub_dir, scrub_json, scrub_json_value, scrub_xml, REDACTED_PREFIX,
};
use serde_json::{json, Value};

#[test]
fn json_strings_are_scrubbed_decoded_and_the_document_stays_valid() {
    let message = failure_message();
    let doc = json!({
        "tests": [
            {"nodeid": format!("t.py::test_x[{}]", SECRETS[0].1), "longrepr": message},
            {"nodeid": "t.py::clean", "longrepr": "assert 1 == 2"},
        ],
        "environment": {"GITHUB_TOKEN": "plain-value-42", "password": "pw", "Python": "3.11"},
    });
    for text in [
        serde_json::to_string(&doc).unwrap(),
        serde_json::to_string_pretty(&doc).unwrap(),
    ] {
        assert!(
            text.contains("\\n-----BEGIN RSA PRIVATE KEY-----\\nMIIE"),
            "PEM is escaped"
        );
        let out = scrub_json(&text);
        let parsed: Value = serde_json::from_str(&out).expect("still JSON");
        assert_eq!(leaks(&out), Vec::<&str>::new(), "{out}");
        assert!(out.contains(&marker("private-key")) && out.contains(&marker("api-key")));
        assert_eq!(
            parsed["tests"][1], doc["tests"][1],
            "clean entries unchanged"
        );
        assert_eq!(parsed["environment"]["GITHUB_TOKEN"], marker("secret"));
        assert_eq!(parsed["environment"]["password"], marker("secret"));
        assert_eq!(parsed["environment"]["Python"], "3.11");
        assert_eq!(scrub_json(&out), out, "idempotent");
    }
}

#[test]
fn json_lines_and_quotes_inside_strings_stay_valid() {
    // go test -json's shape: one event per line; the secret sits after a `\t` escape and a
    // password is quoted inside the string (`\"`).
    let lines = [
        json!({"Action": "output", "Output": format!("\t{}\n", SECRETS[2].1)}),
        json!({"Action": "output", "Output": "login(password=\"hunter2-xyz\")\n"}),
        json!({"Action": "fail", "Test": format!("TestLeak/{}", SECRETS[8].1)}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = scrub_json(&text);
    for line in out.lines() {
        serde_json::from_str::<Value>(line).expect("each line is still JSON");
    }
    for secret in [SECRETS[2].1, "hunter2-xyz", SECRETS[8].1] {
        assert!(!out.contains(secret), "{secret} survived: {out}");
    }
}

#[test]
fn progress_lines_as_arrays_and_a_line_cut_by_a_kill_are_scrubbed() {
    // huddle's pytest progress lines: JSON arrays, the secret behind an escaped quote; the
    // last line cut off where a timeout killed the writer.
    let whole = json!([
        "test",
        [
            "t.py::test_x",
            "failed",
            0.1,
            3,
            "login(password=\"hunter2-xyz\")"
        ]
    ]);
    let text = format!(
        "{whole}\n[\"test\", [\"t.py::y\", \"failed\", 0.1, 3, \"token={}",
        SECRETS[2].1
    );
    let out = String::from_utf8(scrub_bytes(text.as_bytes()).into_owned()).unwrap();
    for secret in ["hunter2-xyz", SECRETS[2].1] {
        assert!(!out.contains(secret), "{secret} survived: {out}");
    }
    let first = out.lines().next().unwrap();
    serde_json::from_str::<Value>(first).expect("the whole line is still JSON");
}

#[test]
fn xml_text_attributes_and_entity_split_secrets_are_scrubbed() {
    let message = failure_message();
    let mut w = quick_xml::Writer::new(Vec::new());
    w.create_element("testsuite")
        .with_attribute(("name", "pytest"))
        .write_inner_content(|w| {
            w.create_element("testcase")
                .with_attribute(("classname", "t"))
                .with_attribute(("name", format!("test_x[{}]", SECRETS[2].1).as_str()))
                .write_inner_content(|w| {
                    w.create_element("failure")
                        .with_attribute(("message", message.as_str()))
                        .write_text_content(quick_xml::events::BytesText::new(&message))?;
                    Ok(())
                })?;
            Ok(())
        })
        .unwrap();
    let xml = String::from_utf8(w.into_inner()).unwrap();
    assert!(
        xml.contains("&quot;password&quot;"),
        "quotes are entities: {xml}"
    );
    let out = scrub_xml(&xml);
    assert_eq!(leaks(&out), Vec::<&str>::new(), "{out}");
    let cases = parse_junit(&out).expect("still well-formed JUnit");
    assert_eq!(cases.len(), 1);
    assert!(
        cases[0].name.contains(&marker("github-token")),
        "{}",
        cases[0].name
    );
    assert!(cases[0].text.contains(&marker("private-key")));
    assert!(cases[0]
        .message
        .as_deref()
        .unwrap()
        .contains(REDACTED_PREFIX));
    // Text in CDATA and comments, and a file cut short.
    let odd = format!(
        "<a><![CDATA[{}]]><!-- {} --><b>{}",
        SECRETS[0].1, SECRETS[2].1, SECRETS[8].1
    );
    let out = scrub_xml(&odd);
    assert_eq!(leaks(&out), Vec::<&str>::new(), "{out}");
}

#[test]
fn bytes_keep_invalid_utf8_and_binary_files_are_left_alone() {
    let mut raw = b"ok \xff\xfe then ".to_vec();
    raw.extend_from_slice(SECRETS[0].1.as_bytes());
    raw.extend_from_slice(b" \xc3(");
    let out = scrub_bytes(&raw);
    assert!(
        out.starts_with(b"ok \xff\xfe then [REDACTED:api-key]"),
        "{out:?}"
    );
    assert!(out.ends_with(b" \xc3("));
    let binary = [b"SQLite format 3\0".as_slice(), SECRETS[0].1.as_bytes()].concat();
    assert_eq!(scrub_bytes(&binary), binary.as_slice());
}

#[test]
fn a_directory_is_scrubbed_file_by_file_by_format() {
    let dir = tempfile::tempdir().unwrap();
    let message = failure_message();
    let json = serde_json::to_string(&json!({"longrepr": message})).unwrap();
    std::fs::write(dir.path().join("report.json"), &json).unwrap();
    std::fs::create_dir(dir.path().join("coverage")).unwrap();
    std::fs::write(dir.path().join("coverage/out.txt"), &message).unwrap();
    std::fs::write(dir.path().join("clean.txt"), "nothing here").unwrap();
    scrub_dir(dir.path()).unwrap();
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let parsed: Value = serde_json::from_str(&json).expect("still JSON");
    assert!(parsed["longrepr"]
        .as_str()
        .unwrap()
        .contains(&marker("jwt")));
    let text = std::fs::read_to_string(dir.path().join("coverage/out.txt")).unwrap();
    assert_eq!(leaks(&json), Vec::<&str>::new());
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 3, "no temporary files left: {names:?}");
}

#[test]
fn json_values_for_the_bus_are_scrubbed_keys_and_all() {
    let mut data = json!({
        "summary": format!("failed: {}", pem()),
        "tests": [format!("t.py::test[{}]", SECRETS[0].1)],
        "env": {"OPENAI_API_KEY": "anything-at-all", "HOME": "/root"},
        "count": 3,
    });
    data[SECRETS[2].1] = json!(1);
    scrub_json_value(&mut data);
    let text = data.to_string();
    assert_eq!(leaks(&text), Vec::<&str>::new(), "{text}");
    assert_eq!(data["env"]["OPENAI_API_KEY"], marker("secret"));
    assert_eq!(data["env"]["HOME"], "/root");
    assert_eq!(data["count"], 3);
    assert!(forbidden().len() > 15);
}
