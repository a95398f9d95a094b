//! A small OpenAI-compatible chat-completions server with scripted replies: real HTTP on
//! `127.0.0.1:0`, `POST /v1/chat/completions`, bearer-token check, JSON bodies, answers with
//! `choices[0].message.content` or `tool_calls` and `usage`, errors as
//! `{"error": {"message", "type"}}`. It records every request it gets.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Scripted {
    /// A completion whose message is this JSON (`content` and/or `tool_calls`), with `usage`
    /// unless `usage` is false.
    Message {
        message: Value,
        finish_reason: &'static str,
        usage: bool,
    },
    /// An error status with an OpenAI-style body.
    Error {
        status: u16,
        message: String,
        kind: &'static str,
    },
    /// Waits, then answers.
    Delay(Duration, Box<Scripted>),
    /// Waits until the test opens the gate, then answers: holds a worker inside its cycle
    /// for as long as the test needs, without a timed sleep.
    Gate(Arc<tokio::sync::Notify>, Box<Scripted>),
    /// The answer of the first pair whose text the request's messages contain: for workers
    /// asking at once, each about its own failure.
    ByPrompt(Vec<(&'static str, Scripted)>),
}

/// A text answer.
pub fn content(text: &str) -> Scripted {
    Scripted::Message {
        message: json!({"role": "assistant", "content": text}),
        finish_reason: "stop",
        usage: true,
    }
}

/// A JSON fix, as asked for with `response_format`.
pub fn fix(edits: &[(&str, &str, &str)]) -> Scripted {
    let edits: Vec<Value> = edits
        .iter()
        .map(|(p, s, r)| json!({"path": p, "search": s, "replace": r}))
        .collect();
    content(&json!({"edits": edits, "explanation": "stub fix", "cannot_fix": null}).to_string())
}

/// The fix as a tool call whose `arguments` is an object, `finish_reason` "stop", no `usage`.
pub fn tool_call_fix(edits: &[(&str, &str, &str)]) -> Scripted {
    let edits: Vec<Value> = edits
        .iter()
        .map(|(p, s, r)| json!({"path": p, "search": s, "replace": r}))
        .collect();
    Scripted::Message {
        message: json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "apply_edits", "arguments": {"edits": edits, "explanation": "", "cannot_fix": null}}
        }]}),
        finish_reason: "stop",
        usage: false,
    }
}

/// An error answer.
pub fn error(status: u16, message: &str) -> Scripted {
    let kind = match status {
        429 => "rate_limit_exceeded",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    Scripted::Error {
        status,
        message: message.into(),
        kind,
    }
}

struct Inner {
    key: String,
    script: VecDeque<Scripted>,
    requests: Vec<Value>,
}

/// The running stub.
#[derive(Clone)]
pub struct LlmStub {
    /// `http://127.0.0.1:PORT/v1`, as a base URL.
    pub base_url: String,
    /// The API key it accepts.
    pub key: String,
    inner: Arc<Mutex<Inner>>,
}

impl LlmStub {
    /// Starts a stub accepting `key` and answering `script` in order.
    pub async fn start(key: &str, script: Vec<Scripted>) -> LlmStub {
        let inner = Arc::new(Mutex::new(Inner {
            key: key.into(),
            script: script.into(),
            requests: Vec::new(),
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind stub");
        let addr = listener.local_addr().expect("stub addr");
        tokio::spawn(async move {
            axum::serve(listener, app).await.expect("stub serves");
        });
        LlmStub {
            base_url: format!("http://{addr}/v1"),
            key: key.into(),
            inner,
        }
    }

    /// Every request body received, in order (valid ones only).
    pub fn requests(&self) -> Vec<Value> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// The user message of request `i`.
    pub fn user_message(&self, i: usize) -> String {
        let r = &self.requests()[i];
        r["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Scripted answers not used yet.
    pub fn remaining(&self) -> usize {
        self.inner.lock().unwrap().script.len()
    }
}

fn openai_error(status: u16, message: &str, kind: &str) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    (StatusCode::from_u16(status).unwrap(), Json(body)).into_response()
}

async fn complete(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let expected = format!("Bearer {}", inner.lock().unwrap().key);
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return openai_error(401, "Incorrect API key provided.", "invalid_request_error");
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return openai_error(
            400,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
        );
    };
    if !request["model"].is_string() || !request["messages"].is_array() {
        return openai_error(
            400,
            "you must provide a model parameter and messages",
            "invalid_request_error",
        );
    }
    let next = {
        let mut inner = inner.lock().unwrap();
        inner.requests.push(request.clone());
        inner.script.pop_front()
    };
    let mut reply = next.unwrap_or_else(|| error(500, "stub: no scripted reply left"));
    let reply = loop {
        reply = match reply {
            Scripted::Delay(d, then) => {
                tokio::time::sleep(d).await;
                *then
            }
            Scripted::Gate(gate, then) => {
                gate.notified().await;
                *then
            }
            Scripted::ByPrompt(choices) => {
                let text = request["messages"].to_string();
                choices
                    .into_iter()
                    .find(|(needle, _)| text.contains(needle))
                    .map(|(_, reply)| reply)
                    .unwrap_or_else(|| error(500, "stub: no scripted reply matches the prompt"))
            }
            other => break other,
        };
    };
    match reply {
        Scripted::Error {
            status,
            message,
            kind,
        } => openai_error(status, &message, kind),
        Scripted::Message {
            message,
            finish_reason,
            usage,
        } => {
            let mut body = json!({
                "id": "chatcmpl-stub", "object": "chat.completion", "created": 1_700_000_000,
                "model": request["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": null}],
            });
            if usage {
                body["usage"] =
                    json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150});
            }
            Json(body).into_response()
        }
        Scripted::Delay(..) | Scripted::Gate(..) | Scripted::ByPrompt(..) => {
            unreachable!("waits and choices are unwrapped above")
        }
    }
}
