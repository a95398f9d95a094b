//! A raw HTTP helper for tests: send JSON, get status, headers and body back.

use reqwest::{header::HeaderMap, Method, StatusCode};
use serde_json::Value;

#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub token: String,
    /// Team for `t()` paths.
    pub team: String,
    client: reqwest::Client,
}

#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// Asserts the status and returns self, printing the body on mismatch.
    #[track_caller]
    pub fn expect_status(self, status: u16) -> Reply {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        self
    }

    /// Asserts an error reply: status and `error.code`.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> Reply {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(
            self.body["error"]["code"], code,
            "unexpected error code; body: {}",
            self.body
        );
        assert!(
            self.body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "error without message"
        );
        self
    }
}

impl Api {
    pub fn new(base: &str, token: &str) -> Api {
        Api {
            base: base.to_string(),
            token: token.to_string(),
            team: String::new(),
            client: reqwest::Client::new(),
        }
    }

    pub fn in_team(mut self, team: &str) -> Api {
        self.team = team.to_string();
        self
    }

    /// `/v1/teams/{team}{rest}`
    pub fn t(&self, rest: &str) -> String {
        format!("/v1/teams/{}{rest}", self.team)
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(body) = body {
            req = req.header("content-type", "application/json").body(body);
        }
        let res = req.send().await.expect("request sent");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body read");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Like `send`, but `None` when the daemon does not answer (connection refused or reset):
    /// for crash tests, where an unanswered request is an expected outcome.
    pub async fn send_opt(&self, method: Method, path: &str, body: Value) -> Option<Reply> {
        self.send_raw(method, path, Some(body.to_string().into_bytes()), &[])
            .await
    }

    pub async fn try_post(&self, path: &str, body: Value) -> Option<Reply> {
        self.send_opt(Method::POST, path, body).await
    }

    pub async fn try_post_with_key(&self, path: &str, body: Value, key: &str) -> Option<Reply> {
        self.send_raw(
            Method::POST,
            path,
            Some(body.to_string().into_bytes()),
            &[("Idempotency-Key", key)],
        )
        .await
    }

    async fn send_raw(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Option<Reply> {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(body) = body {
            req = req.header("content-type", "application/json").body(body);
        }
        let res = req.send().await.ok()?;
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.ok()?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        Some(Reply {
            status,
            headers,
            body,
        })
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, None, &[]).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(body.to_string().into_bytes()), &[])
            .await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send(
            Method::PATCH,
            path,
            Some(body.to_string().into_bytes()),
            &[],
        )
        .await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(Method::PUT, path, Some(body.to_string().into_bytes()), &[])
            .await
    }

    /// Claims with the role's default prefixes; `None` on 204.
    pub async fn claim(&self, body: Value) -> Option<Value> {
        let r = self.post(&self.t("/tasks/claim"), body).await;
        match r.status.as_u16() {
            200 => Some(r.body),
            204 => None,
            s => panic!("claim answered {s}: {}", r.body),
        }
    }
}
