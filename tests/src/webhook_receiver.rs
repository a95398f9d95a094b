//! A webhook receiver on port 0 for tests: records every request it gets and answers with the
//! statuses it was told to, in order (then 200).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: serde_json::Value,
    pub raw: Vec<u8>,
}

#[derive(Clone, Default)]
struct Shared {
    got: Arc<Mutex<Vec<Received>>>,
    answers: Arc<Mutex<VecDeque<u16>>>,
}

pub struct Receiver {
    pub url: String,
    shared: Shared,
    _server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Answers `answers` in order, then 200 to everything.
    pub async fn start(answers: &[u16]) -> Receiver {
        let shared = Shared::default();
        shared.answers.lock().unwrap().extend(answers);
        let app = Router::new()
            .route("/hook", post(take))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url,
            shared,
            _server: server,
        }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.got.lock().unwrap().clone()
    }
}

async fn take(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    shared.got.lock().unwrap().push(Received {
        headers,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        raw: body.to_vec(),
    });
    let status = shared.answers.lock().unwrap().pop_front().unwrap_or(200);
    StatusCode::from_u16(status).unwrap()
}
