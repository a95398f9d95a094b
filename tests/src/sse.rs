//! A minimal SSE reader for tests over real HTTP (the SDK has the full reconnecting client).

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

pub struct SseReader {
    events: Pin<Box<dyn Stream<Item = Result<Event, String>> + Send>>,
}

impl SseReader {
    /// Opens `url` with the bearer token, resuming after `last_event_id` when given.
    pub async fn open(url: &str, token: &str, last_event_id: Option<i64>) -> SseReader {
        let mut req = reqwest::Client::new().get(url).bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let res = req.send().await.expect("stream opened");
        assert_eq!(res.status(), 200, "stream status");
        let events = res
            .bytes_stream()
            .eventsource()
            .map(|r| r.map_err(|e| e.to_string()));
        SseReader {
            events: Box::pin(events),
        }
    }

    /// The next event, failing the test if none arrives within 20 s; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Event> {
        match tokio::time::timeout(Duration::from_secs(20), self.events.next()).await {
            Ok(Some(Ok(e))) => Some(e),
            Ok(Some(Err(_))) | Ok(None) => None,
            Err(_) => panic!("no SSE event within 20 s"),
        }
    }

    /// The next `n` events' ids (as numbers) and parsed data.
    pub async fn take(&mut self, n: usize) -> Vec<(i64, String, serde_json::Value)> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let e = self.next().await.expect("stream ended early");
            out.push((
                e.id.parse().expect("numeric id"),
                e.event,
                serde_json::from_str(&e.data).expect("json data"),
            ));
        }
        out
    }
}
