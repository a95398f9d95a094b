//! A lean HTTP client for driving the daemon in benchmarks: pre-built URLs, pooled keep-alive
//! connections, bodies as bytes.

use serde_json::Value;

#[derive(Clone)]
pub struct BenchClient {
    http: reqwest::Client,
    pub base: String,
    auth: String,
}

impl BenchClient {
    pub fn new(base: &str, token: &str) -> BenchClient {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(4096)
            .tcp_nodelay(true)
            .build()
            .expect("http client");
        BenchClient {
            http,
            base: base.to_string(),
            auth: format!("Bearer {token}"),
        }
    }

    /// The same token against another daemon (a replica).
    pub fn on(&self, base: &str) -> BenchClient {
        BenchClient {
            http: self.http.clone(),
            base: base.to_string(),
            auth: self.auth.clone(),
        }
    }

    /// The same base and token on a connection pool of its own, for a client that runs on
    /// another runtime (a pool's connections belong to the runtime that opened them).
    pub fn detached(&self) -> BenchClient {
        let mut client = BenchClient::new(&self.base, "");
        client.auth = self.auth.clone();
        client
    }

    pub fn with_token(&self, token: &str) -> BenchClient {
        BenchClient {
            http: self.http.clone(),
            base: self.base.clone(),
            auth: format!("Bearer {token}"),
        }
    }

    /// POSTs `body`; returns status and the parsed body (Null when empty).
    pub async fn post(&self, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).map_err(|e| e.to_string())?)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = res.status().as_u16();
        let bytes = res.bytes().await.map_err(|e| e.to_string())?;
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| e.to_string())?
        };
        Ok((status, value))
    }

    /// POSTs and insists on `want`.
    pub async fn post_ok(&self, path: &str, body: &Value, want: u16) -> Value {
        match self.post(path, body).await {
            Ok((status, value)) if status == want => value,
            Ok((status, value)) => panic!("POST {path} answered {status}: {value}"),
            Err(e) => panic!("POST {path}: {e}"),
        }
    }

    /// POSTs a body already encoded and insists on `want`, reading the answer without parsing
    /// it: for hot loops whose answers the benchmark does not need.
    pub async fn post_encoded(&self, path: &str, body: Vec<u8>, want: u16) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        let status = res.status().as_u16();
        let bytes = res
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        assert_eq!(
            status,
            want,
            "POST {path} answered {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }

    /// DELETEs `path`; the status.
    pub async fn http_delete(&self, path: &str) -> u16 {
        self.http
            .delete(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .send()
            .await
            .unwrap_or_else(|e| panic!("DELETE {path}: {e}"))
            .status()
            .as_u16()
    }

    /// POSTs raw bytes; the status and the answer as text.
    pub async fn post_bytes(&self, path: &str, body: Vec<u8>) -> (u16, String) {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        let status = res.status().as_u16();
        (status, res.text().await.unwrap_or_default())
    }

    /// PATCHes shared memory with an RFC 7396 merge patch and insists on 200.
    pub async fn patch_memory(&self, team: &str, patch: &Value) {
        let path = format!("/v1/teams/{team}/memory");
        let res = self
            .http
            .patch(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .header("content-type", "application/merge-patch+json")
            .body(serde_json::to_vec(patch).expect("encode"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("PATCH {path}: {e}"));
        let status = res.status().as_u16();
        let bytes = res.bytes().await.unwrap_or_default();
        assert_eq!(
            status,
            200,
            "PATCH {path} answered {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }

    /// The sum of every series of Prometheus metric `name` (a counter, or a histogram's
    /// `_sum`/`_count`) at `/metrics`; 0 when absent. Needs the admin token.
    pub async fn metric(&self, name: &str) -> f64 {
        let res = self
            .http
            .get(format!("{}/metrics", self.base))
            .header("authorization", &self.auth)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
        assert_eq!(res.status().as_u16(), 200, "GET /metrics");
        let text = res.text().await.unwrap_or_default();
        text.lines()
            .filter(|l| {
                l.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn raw(&self) -> (&reqwest::Client, &str) {
        (&self.http, &self.auth)
    }
}

/// Creates team `name` and returns a coordinator client plus a function to add agents.
pub async fn setup_team(admin: &BenchClient, name: &str) -> BenchClient {
    admin
        .post_ok("/v1/teams", &serde_json::json!({"name": name}), 201)
        .await;
    add_agent(admin, name, "coordinator", "coordinator").await
}

pub async fn add_agent(admin: &BenchClient, team: &str, agent: &str, role: &str) -> BenchClient {
    let created = admin
        .post_ok(
            &format!("/v1/teams/{team}/agents"),
            &serde_json::json!({"name": agent, "role": role}),
            201,
        )
        .await;
    admin.with_token(created["token"].as_str().expect("token"))
}

/// Creates tasks in batches of up to 1,000 (all-or-none each).
pub async fn create_tasks(coord: &BenchClient, team: &str, tasks: Vec<Value>) {
    create_tasks_by(coord, team, tasks, 1000).await
}

/// [`create_tasks`] in requests of at most `per_request` (a daemon's `[limits] max_batch`).
pub async fn create_tasks_by(
    coord: &BenchClient,
    team: &str,
    tasks: Vec<Value>,
    per_request: usize,
) {
    for chunk in tasks.chunks(per_request.max(1)) {
        coord
            .post_ok(
                &format!("/v1/teams/{team}/tasks"),
                &Value::Array(chunk.to_vec()),
                201,
            )
            .await;
    }
}
