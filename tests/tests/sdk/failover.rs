//! Several daemon URLs (`http://a,http://b`, also `HUDDLE_URL`): a call that cannot connect to
//! the first goes to the next at once — a create (sent once) included — and the client stays
//! there; the CLI takes the same list.

use huddle_sdk::Client;
use huddle_tests::cli::Huddle;
use huddle_tests::{clients, TestDaemon};

/// A URL where nothing listens: a port bound and released.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[tokio::test]
async fn a_client_given_a_dead_daemon_first_uses_the_next_one() {
    let live = TestDaemon::start().await;
    let coord_api = live.team("qa").await;
    let urls = format!("{},{}", dead_url(), live.url);
    let coord = Client::builder(&urls)
        .token(&coord_api.token)
        .team("qa")
        .build()
        .unwrap();
    assert_eq!(coord.base_urls().len(), 2);
    // A create is sent once; it never reached the dead daemon, so it goes to the live one.
    let created = coord
        .create_task(&clients::task("TEST-001", "through the second URL"))
        .await
        .unwrap();
    assert_eq!(created.id, "TEST-001");
    assert_eq!(
        coord.base_url().as_str().trim_end_matches('/'),
        live.url,
        "the client stays on the daemon that answered"
    );
    let got = coord.get_task("TEST-001").await.unwrap();
    assert_eq!(got.subject, "through the second URL");
}

#[tokio::test]
async fn the_cli_takes_several_urls_in_huddle_url() {
    let live = TestDaemon::start().await;
    let coord_api = live.team("qa").await;
    let urls = format!("{},{}", dead_url(), live.url);
    let cli = Huddle::new(&urls, &coord_api.token, "qa");
    let added = cli.json(&["task", "add", "TEST", "from the CLI"]).await;
    assert_eq!(added["id"], "TEST-001");
    let listed = cli.json(&["task", "ls"]).await;
    assert!(
        listed.to_string().contains("from the CLI"),
        "the task is listed: {listed}"
    );
}
