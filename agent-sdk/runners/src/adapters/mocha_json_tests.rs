//! Finding mocha's JSON report among what the tests printed.

use super::json_on_stdout;

#[test]
fn the_report_on_stdout_is_found_after_what_the_tests_printed() {
    let report = "{\n  \"stats\": {\n    \"tests\": 1\n  },\n  \"tests\": []\n}";
    let stdout = format!("a test printed this\n{{\n  \"stats\": {{ \"not\": \"it\" }}\n{report}\n");
    assert_eq!(json_on_stdout(stdout.as_bytes()), Some(report.as_bytes()));
    assert_eq!(json_on_stdout(report.as_bytes()), Some(report.as_bytes()));
    assert_eq!(json_on_stdout(b"3 passing\n"), None);
    assert_eq!(json_on_stdout(b"{\n  \"stats\": {\n    \"tests\": "), None);
}
