//! `huddle team create`, `huddle agent add|ls`, configuration by flags and environment, and
//! errors as one line with a non-zero exit code.

use huddle_tests::cli::Huddle;
use huddle_tests::{TestDaemon, ADMIN};

#[tokio::test]
async fn teams_and_agents_are_created_and_the_token_is_printed_once() {
    let d = TestDaemon::start().await;
    let admin = Huddle::new(&d.url, ADMIN, "qa");

    assert_eq!(
        admin.ok(&["team", "create", "qa"]).await.trim(),
        "created team qa"
    );
    let team = admin.json(&["team", "create", "review"]).await;
    assert_eq!(team["name"], "review");
    assert!(team["createdAt"].is_string());
    let listed = admin.json(&["team", "ls"]).await;
    let names: Vec<&str> = listed["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["qa", "review"]);
    let table = admin.ok(&["team", "ls"]).await;
    assert!(
        table.starts_with("TEAM") && table.contains("review"),
        "{table}"
    );

    // The bare token on stdout, so scripts can capture it; the explanation on stderr.
    let out = admin
        .run(&["agent", "add", "coord", "--role", "coordinator"])
        .await;
    assert!(out.status.success());
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        !token.is_empty() && !token.contains(' '),
        "just the token: {token:?}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("will not be shown again"));
    let coord = Huddle::new(&d.url, &token, "qa");
    let (_, refused) = coord.fails(&["team", "ls"]).await;
    assert!(
        refused.contains("a coordinator may not list every team"),
        "{refused}"
    );
    let tester = coord
        .json(&["agent", "add", "tester-1", "--role", "tester"])
        .await;
    assert_eq!(
        (tester["name"].as_str(), tester["role"].as_str()),
        (Some("tester-1"), Some("tester"))
    );
    assert!(tester["token"].as_str().is_some_and(|t| !t.is_empty()));

    let agents = coord.json(&["agent", "ls"]).await;
    let names: Vec<_> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["coord", "tester-1"]);
    let table = coord.ok(&["agent", "ls"]).await;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("tester-1  tester"), "{table}");

    let rotated = coord.json(&["agent", "rotate", "tester-1"]).await;
    let new_token = rotated["token"].as_str().unwrap();
    assert_ne!(Some(new_token), tester["token"].as_str());
    let renewed = Huddle::new(&d.url, new_token, "qa");
    renewed.json(&["agent", "ls"]).await;
    let revoked = coord.ok(&["agent", "revoke", "tester-1"]).await;
    assert_eq!(revoked.trim(), "revoked the token of tester-1");
    let (_, err) = renewed.fails(&["agent", "ls"]).await;
    assert!(err.contains("401"), "{err}");

    // Flags override the environment.
    let other = Huddle::new("http://127.0.0.1:1", "wrong", "nope");
    let by_flags = other
        .json(&[
            "agent", "ls", "--url", &d.url, "--token", &token, "--team", "qa",
        ])
        .await;
    assert_eq!(by_flags["agents"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn errors_are_one_line_naming_the_problem_with_a_failing_exit_code() {
    let mut d = TestDaemon::start().await;
    let admin = Huddle::new(&d.url, ADMIN, "qa");
    admin.ok(&["team", "create", "qa"]).await;

    let (code, err) = admin.fails(&["team", "create", "qa"]).await;
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("huddle: ") && err.contains("already exists") && err.contains("409"),
        "{err}"
    );

    let (code, err) = admin.fails(&["agent", "add", "x", "--role", "boss"]).await;
    assert_eq!(code, 2, "bad usage: {err}");
    assert!(err.contains("unknown role"), "{err}");

    let (_, err) = Huddle::new(&d.url, "nope", "qa")
        .fails(&["task", "ls"])
        .await;
    assert!(err.contains("401") && err.contains("unauthorized"), "{err}");
    let (_, err) = Huddle::new(&d.url, "", "qa").fails(&["task", "ls"]).await;
    assert_eq!(
        err.trim(),
        "huddle: no token: pass --token or set HUDDLE_TOKEN"
    );
    let (_, err) = Huddle::new(&d.url, ADMIN, "").fails(&["agent", "ls"]).await;
    assert_eq!(
        err.trim(),
        "huddle: no team: pass --team or set HUDDLE_TEAM"
    );

    let url = d.url.clone();
    d.stop().await;
    let (code, err) = Huddle::new(&url, ADMIN, "qa").fails(&["agent", "ls"]).await;
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot reach the huddle daemon") && err.contains(&url),
        "{err}"
    );
}
