//! The production chat-completions client against the OpenAI-compatible stub over real HTTP:
//! retries on 429/5xx, clear errors otherwise, lenient replies, the budget, and a key that never
//! shows in errors.

use huddle_sdk::llm::{parse, LlmClient, LlmError, LlmSettings};
use huddle_tests::llm::stub::{content, error, tool_call_fix};
use huddle_tests::llm::team::llm;
use huddle_tests::llm::LlmStub;
use serde_json::json;

fn client(stub: &LlmStub) -> LlmClient {
    LlmClient::new(llm(stub, 5).resolve().unwrap()).unwrap()
}

fn ask() -> Vec<serde_json::Value> {
    vec![json!({"role": "user", "content": "fix it"})]
}

#[tokio::test]
async fn busy_and_failing_answers_are_retried_then_succeed() {
    let stub = LlmStub::start(
        "sk-k",
        vec![
            error(429, "Rate limit reached"),
            error(503, "overloaded"),
            content("ok"),
        ],
    )
    .await;
    let c = client(&stub);
    let mut budget = c.budget();
    let reply = c.complete(&ask(), &mut budget).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(stub.requests().len(), 3);
    assert_eq!(
        (budget.calls(), budget.tokens()),
        (1, 150),
        "one call, the reported usage"
    );
}

#[tokio::test]
async fn a_persistent_500_ends_with_the_endpoints_message() {
    let stub = LlmStub::start("sk-k", vec![error(500, "The server had an error"); 4]).await;
    let c = client(&stub);
    let e = c.complete(&ask(), &mut c.budget()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the model endpoint answered 500 after 4 tries: The server had an error"
    );
}

#[tokio::test]
async fn other_errors_are_not_retried_and_never_show_the_key() {
    let stub = LlmStub::start("sk-right-key", vec![]).await;
    let settings = LlmSettings {
        api_key: Some("sk-wrong-secret-key-123456".into()),
        ..llm(&stub, 5)
    };
    let c = LlmClient::new(settings.resolve().unwrap()).unwrap();
    let e = c.complete(&ask(), &mut c.budget()).await.unwrap_err();
    assert_eq!(
        e,
        LlmError::Status {
            status: 401,
            message: "Incorrect API key provided.".into(),
            tries: 1
        }
    );
    assert!(!format!("{e} {e:?} {c:?}").contains("wrong-secret"));
}

#[tokio::test]
async fn tool_calls_with_finish_reason_stop_object_arguments_and_no_usage_are_read() {
    let stub = LlmStub::start("sk-k", vec![tool_call_fix(&[("a.py", "x", "y")])]).await;
    let c = client(&stub);
    let mut budget = c.budget();
    let reply = c.complete(&ask(), &mut budget).await.unwrap();
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert!(reply.usage.is_none());
    assert!(budget.tokens() > 0, "tokens estimated without usage");
    let fix = parse::parse_fix(&reply).unwrap();
    assert_eq!(
        (fix.edits[0].path.as_str(), fix.edits[0].replace.as_str()),
        ("a.py", "y")
    );
}

#[tokio::test]
async fn an_endpoint_without_structured_output_is_asked_again_in_plain_text() {
    let stub = LlmStub::start(
        "sk-k",
        vec![
            error(
                400,
                "Unrecognized request argument supplied: response_format",
            ),
            content("plain"),
        ],
    )
    .await;
    let c = client(&stub);
    let reply = c.complete(&ask(), &mut c.budget()).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("plain"));
    let requests = stub.requests();
    assert!(
        requests[0].get("response_format").is_some()
            && requests[1].get("response_format").is_none()
    );
}

#[tokio::test]
async fn the_budget_stops_calls() {
    let stub = LlmStub::start("sk-k", vec![content("a"), content("b")]).await;
    let settings = LlmSettings {
        max_calls_per_task: Some(1),
        ..llm(&stub, 5)
    };
    let c = LlmClient::new(settings.resolve().unwrap()).unwrap();
    let mut budget = c.budget();
    c.complete(&ask(), &mut budget).await.unwrap();
    let e = c.complete(&ask(), &mut budget).await.unwrap_err();
    assert!(matches!(e, LlmError::Budget(_)), "{e}");
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_clear_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let settings = LlmSettings {
        base_url: Some(format!("http://{addr}/v1")),
        model: Some("m".into()),
        ..LlmSettings::default()
    };
    let c = LlmClient::new(settings.resolve().unwrap()).unwrap();
    let e = c.complete(&ask(), &mut c.budget()).await.unwrap_err();
    assert!(
        e.to_string().starts_with("cannot reach the model endpoint"),
        "{e}"
    );
}

/// A TCP endpoint that answers each connection with `reply` (raw bytes), then closes it.
async fn raw_endpoint(reply: &'static [u8]) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let _ = sock.write_all(reply).await;
                // Dropping the socket closes it: with nothing written, the client sees a reset.
            });
        }
    });
    addr
}

fn client_for(addr: std::net::SocketAddr) -> LlmClient {
    let settings = LlmSettings {
        base_url: Some(format!("http://{addr}/v1")),
        model: Some("m".into()),
        timeout_secs: Some(5),
        retries: Some(1),
        retry_backoff_ms: Some(10),
        ..LlmSettings::default()
    };
    LlmClient::new(settings.resolve().unwrap()).unwrap()
}

#[tokio::test]
async fn connections_reset_mid_request_and_garbage_answers_end_with_a_clear_error() {
    for (what, reply) in [
        ("reset", &b""[..]),
        ("garbage", &b"\x00\x01 not http at all\r\n\r\n"[..]),
        ("a truncated body", &b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\": ["[..]),
        ("a non-JSON body", &b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\nnot json!"[..]),
    ] {
        let c = client_for(raw_endpoint(reply).await);
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), c.complete(&ask(), &mut c.budget())).await;
        let e = outcome.unwrap_or_else(|_| panic!("{what}: the client hung")).expect_err(what);
        assert!(!e.to_string().is_empty(), "{what}: an error that says something");
    }
}
