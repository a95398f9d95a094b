//! Outbound webhooks against a real receiver on port 0: what is sent and when, the signature,
//! retries, the delivery log, who may manage them, and that nothing is lost over a restart
//! (SQLite, and PostgreSQL with HUDDLE_TEST_BACKEND=postgres).

use hmac::{Hmac, Mac};
use huddle_tests::http::Api;
use huddle_tests::webhook_receiver::{Received, Receiver};
use huddle_tests::{eventually, TestDaemon};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

async fn daemon() -> TestDaemon {
    TestDaemon::start_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
        s.webhooks.retry_base_ms = 10;
        s.webhooks.attempts = 3;
    })
    .await
}

async fn register(c: &Api, url: &str, events: Value) -> Value {
    c.post(&c.t("/webhooks"), json!({"url": url, "events": events}))
        .await
        .expect_status(201)
        .body
}

async fn wait_for(receiver: &Receiver, n: usize) -> Vec<Received> {
    eventually(60, &format!("{n} request(s) at the receiver"), || async {
        receiver.received().len() >= n
    })
    .await;
    receiver.received()
}

async fn deliveries(c: &Api, n: usize) -> Vec<Value> {
    let path = c.t("/webhooks/deliveries");
    eventually(60, &format!("{n} deliveries logged"), || {
        let (c, path) = (c.clone(), path.clone());
        async move {
            c.get(&path).await.body["deliveries"]
                .as_array()
                .unwrap()
                .len()
                >= n
        }
    })
    .await;
    c.get(&path).await.expect_status(200).body["deliveries"]
        .as_array()
        .unwrap()
        .clone()
}

fn signature_ok(secret: &str, r: &Received) -> bool {
    let ts = r.headers["x-huddle-timestamp"].to_str().unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{ts}.").as_bytes());
    mac.update(&r.raw);
    let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    r.headers["x-huddle-signature"].to_str().unwrap() == expected
}

#[tokio::test]
async fn a_fix_required_message_is_sent_signed_in_a_shape_chat_services_take() {
    let d = daemon().await;
    let receiver = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    let hook = register(&c, &receiver.url, json!(["fix_required"])).await;
    let secret = hook["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{hook}");
    let tester = d.agent("qa", "tester-1", "tester").await;
    for (kind, summary) in [
        ("impl_progress", "not sent"),
        ("fix_required", "TEST-001: needs a person"),
    ] {
        tester
            .post(&c.t("/messages"), json!({"to": "*", "type": kind, "summary": summary, "data": {"taskId": "TEST-001"}}))
            .await
            .expect_status(201);
    }
    let got = wait_for(&receiver, 1).await;
    let r = &got[0];
    assert!(
        signature_ok(&secret, r),
        "the signature checks with the secret"
    );
    assert_eq!(r.headers["x-huddle-event"], "fix_required");
    assert_eq!(r.body["text"], r.body["content"]);
    assert!(
        r.body["text"]
            .as_str()
            .unwrap()
            .contains("TEST-001: needs a person"),
        "{}",
        r.body
    );
    assert_eq!(r.body["huddle"]["taskId"], "TEST-001");
    assert_eq!(r.body["huddle"]["from"], "tester-1");
    assert_eq!(r.body["huddle"]["team"], "qa");
    let log = deliveries(&c, 1).await;
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(
        (log[0]["attempts"].as_u64(), log[0]["httpStatus"].as_u64()),
        (Some(1), Some(200))
    );
    assert_eq!(log[0]["taskId"], "TEST-001");
    // Listing never shows the secret again.
    let listed = c.get(&c.t("/webhooks")).await.expect_status(200).body;
    assert_eq!(listed["webhooks"][0]["id"], hook["id"]);
    assert!(listed["webhooks"][0].get("secret").is_none(), "{listed}");
    assert_eq!(
        receiver.received().len(),
        1,
        "the impl_progress message was not sent"
    );
}

#[tokio::test]
async fn a_refused_notice_is_retried_and_one_that_never_lands_is_logged_as_failed() {
    let d = daemon().await;
    // The first notice: 500 then 503, then 200 on the third attempt. The second: refused on
    // all three attempts. The third lands at once: a failed one does not block what follows.
    let receiver = Receiver::start(&[500, 503, 200, 500, 500, 500]).await;
    let c = d.team("qa").await;
    register(&c, &receiver.url, json!(["fix_required"])).await;
    for n in 1..=3 {
        c.post(
            &c.t("/messages"),
            json!({"to": "*", "type": "fix_required", "summary": format!("fix {n}")}),
        )
        .await
        .expect_status(201);
    }
    let got = wait_for(&receiver, 7).await;
    let ids: Vec<_> = got
        .iter()
        .map(|r| r.headers["x-huddle-delivery"].to_str().unwrap().to_string())
        .collect();
    assert_eq!(ids[0], ids[2], "a retry carries the same delivery id");
    let log = deliveries(&c, 3).await;
    let by_summary = |n: usize| log[3 - n].clone();
    assert_eq!(
        (
            by_summary(1)["status"].as_str(),
            by_summary(1)["attempts"].as_u64()
        ),
        (Some("delivered"), Some(3))
    );
    assert_eq!(
        (
            by_summary(2)["status"].as_str(),
            by_summary(2)["attempts"].as_u64()
        ),
        (Some("failed"), Some(3))
    );
    assert_eq!(by_summary(2)["httpStatus"], 500);
    assert_eq!(by_summary(2)["error"], "answered 500");
    assert_eq!(by_summary(3)["status"], "delivered");
}

#[tokio::test]
async fn failed_tasks_and_missed_gates_are_sent_only_to_webhooks_that_chose_them() {
    let d = daemon().await;
    let failures = Receiver::start(&[]).await;
    let gates = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    register(&c, &failures.url, json!(["task_failed"])).await;
    register(&c, &gates.url, json!(["gate_missed"])).await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "check the parser"}),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester-1", "tester").await;
    tester.claim(json!({})).await.expect("claimed");
    tester
        .post(
            &c.t("/tasks/TEST-001/fail"),
            json!({"reason": "the parser crashed", "final": true}),
        )
        .await
        .expect_status(200);
    for passed in [true, false] {
        tester
            .post(
                &c.t("/messages"),
                json!({"to": "*", "type": "test_result", "summary": format!("gate met: {passed}"),
                "data": {"taskId": "TEST-001", "qualityGatePassed": passed}}),
            )
            .await
            .expect_status(201);
    }
    let failed = wait_for(&failures, 1).await;
    assert_eq!(failed[0].body["huddle"]["trigger"], "task_failed");
    assert!(
        failed[0].body["text"]
            .as_str()
            .unwrap()
            .contains("TEST-001 failed: check the parser (the parser crashed)"),
        "{}",
        failed[0].body
    );
    let missed = wait_for(&gates, 1).await;
    assert_eq!(missed[0].body["huddle"]["trigger"], "gate_missed");
    assert!(missed[0].body["text"]
        .as_str()
        .unwrap()
        .contains("gate met: false"));
    // Both logs are complete before the counts are read: nothing else was sent to either.
    deliveries(&c, 2).await;
    assert_eq!((failures.received().len(), gates.received().len()), (1, 1));
}

#[tokio::test]
async fn what_was_posted_while_no_daemon_sent_is_sent_after_a_restart() {
    let d = TestDaemon::start_with(|s| {
        s.webhooks.enabled = false;
        s.webhooks.allow_private = true;
        s.webhooks.poll_ms = 20;
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    let c = d.team("qa").await;
    register(&c, &receiver.url, json!(["fix_required"])).await;
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "fix_required", "summary": "while nobody sent"}),
    )
    .await
    .expect_status(201);
    let mut d = d;
    d.settings.webhooks.enabled = true;
    let d = d.restart().await;
    let got = wait_for(&receiver, 1).await;
    assert_eq!(got[0].body["huddle"]["summary"], "while nobody sent");
    drop(d);
}

#[tokio::test]
async fn only_a_coordinator_manages_webhooks_within_the_teams_cap() {
    let d = TestDaemon::start_with(|s| s.webhooks.max_per_team = 1).await;
    let c = d.team("qa").await;
    // Not a public address: refused unless [webhooks] allow_private.
    c.post(
        &c.t("/webhooks"),
        json!({"url": "http://127.0.0.1:9/hook", "events": ["fix_required"]}),
    )
    .await
    .expect_error(400, "invalid_field");
    for (body, what) in [
        (
            json!({"url": "ftp://example.com/", "events": ["fix_required"]}),
            "scheme",
        ),
        (
            json!({"url": "https://u:p@example.com/", "events": ["fix_required"]}),
            "credentials",
        ),
        (
            json!({"url": "https://example.com/", "events": []}),
            "events",
        ),
        (
            json!({"url": "https://example.com/", "events": ["everything"]}),
            "unknown trigger",
        ),
    ] {
        let r = c.post(&c.t("/webhooks"), body).await;
        assert_eq!(r.status, 400, "{what}: {}", r.body);
    }
    let tester = d.agent("qa", "tester-1", "tester").await;
    tester
        .get(&c.t("/webhooks"))
        .await
        .expect_error(403, "forbidden");
    tester
        .get(&c.t("/webhooks/deliveries"))
        .await
        .expect_error(403, "forbidden");
    // A literal public address needs no lookup; the cap is one per team here.
    let hook = register(&c, "http://93.184.215.14/hook", json!(["task_failed"])).await;
    c.post(
        &c.t("/webhooks"),
        json!({"url": "http://93.184.215.14/other", "events": ["fix_required"]}),
    )
    .await
    .expect_error(409, "team_limit");
    let path = c.t(&format!("/webhooks/{}", hook["id"]));
    assert_eq!(c.send(Method::DELETE, &path, None, &[]).await.status, 204);
    assert_eq!(c.send(Method::DELETE, &path, None, &[]).await.status, 404);
    assert_eq!(
        c.send(Method::DELETE, &c.t("/webhooks/nope"), None, &[])
            .await
            .status,
        404
    );
    let listed = c.get(&c.t("/webhooks")).await.expect_status(200).body;
    assert_eq!(listed["webhooks"], json!([]));
}

#[tokio::test]
async fn a_name_that_resolves_to_a_private_address_is_refused_without_saying_which() {
    let hook = json!({"url": "http://localhost:9/hook", "events": ["fix_required"]});
    let hides_the_address = |text: &str| !text.contains("127.0.0.1") && !text.contains("::1");
    // Registering: refused, and the answer does not say where `localhost` points.
    let d = TestDaemon::start_with(|s| s.webhooks.attempts = 1).await;
    let c = d.team("qa").await;
    let refused = c.post(&c.t("/webhooks"), hook.clone()).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let said = refused.body.to_string();
    assert!(said.contains("non-public address"), "{said}");
    assert!(hides_the_address(&said), "{said}");
    // Sending: a webhook registered while private addresses were allowed, then sent to after
    // they no longer are, is logged as failed without the address either.
    // Not sending meanwhile: a daemon that sends leases the webhook for two minutes, and the
    // next one could not send until that lease ran out.
    let mut d = d;
    d.settings.webhooks.allow_private = true;
    d.settings.webhooks.enabled = false;
    let mut d = d.restart().await;
    register(&c, hook["url"].as_str().unwrap(), hook["events"].clone()).await;
    d.settings.webhooks.allow_private = false;
    d.settings.webhooks.enabled = true;
    d.settings.webhooks.poll_ms = 20;
    let d = d.restart().await;
    c.post(
        &c.t("/messages"),
        json!({"to": "*", "type": "fix_required", "summary": "to localhost"}),
    )
    .await
    .expect_status(201);
    let log = deliveries(&c, 1).await;
    assert_eq!(log[0]["status"], "failed", "{}", log[0]);
    let error = log[0]["error"].as_str().unwrap();
    assert!(error.contains("non-public address"), "{error}");
    let listed = c.get(&c.t("/webhooks/deliveries")).await.body.to_string();
    assert!(hides_the_address(&listed), "{listed}");
    drop(d);
}
