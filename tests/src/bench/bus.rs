//! `bus`: P posters send messages, each to one of S subscriber agents that follows its own
//! messages on `/messages/stream?to=<name>`; posts per second, and post → delivery latency.
//! `--post-batch N` sends N messages per request through `POST …/messages/batch`.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Barrier};

pub async fn run(admin: &BenchClient, sizes: &Sizes) -> Figures {
    let coord = setup_team(admin, "bus").await;
    let subscribers = sizes.subscribers.max(1);
    let base = Instant::now();
    let (lat_tx, mut lat_rx) = mpsc::unbounded_channel::<Duration>();
    let ready = Arc::new(Barrier::new(subscribers + 1));
    let mut names = Vec::new();
    for s in 0..subscribers {
        let name = format!("sub{s}");
        let api = add_agent(admin, "bus", &name, "observer").await;
        let (lat_tx, ready) = (lat_tx.clone(), ready.clone());
        let url = format!("{}/v1/teams/bus/messages/stream?to={name}", api.base);
        tokio::spawn(async move {
            let (http, auth) = api.raw();
            let res = http
                .get(url)
                .header("authorization", auth)
                .send()
                .await
                .expect("stream");
            assert_eq!(res.status(), 200);
            ready.wait().await;
            let mut events = res.bytes_stream().eventsource();
            while let Some(Ok(event)) = events.next().await {
                let msg: Delivered = serde_json::from_str(&event.data).expect("json");
                let sent = Duration::from_micros(msg.data.sent_us);
                let _ = lat_tx.send(base.elapsed().saturating_sub(sent));
            }
        });
        names.push(name);
    }
    drop(lat_tx);
    ready.wait().await;
    let names = Arc::new(names);
    let per_poster = sizes.messages / sizes.workers.max(1);
    let batch = sizes.post_batch.clamp(1, 1000);
    let started = Instant::now();
    let mut posters = Vec::new();
    for p in 0..sizes.workers.max(1) {
        let api = add_agent(admin, "bus", &format!("poster{p}"), "tester").await;
        let names = names.clone();
        posters.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            let message = |i: usize| Outgoing {
                to: &names[(p * per_poster + i) % names.len()],
                kind: "impl_progress",
                summary: "bench",
                data: SentAt {
                    sent_us: base.elapsed().as_micros() as u64,
                },
            };
            let mut i = 0;
            while i < per_poster {
                let n = batch.min(per_poster - i);
                let t0 = Instant::now();
                if batch == 1 {
                    let body = serde_json::to_vec(&message(i)).expect("encode");
                    api.post_encoded("/v1/teams/bus/messages", body, 201).await;
                } else {
                    let messages: Vec<_> = (i..i + n).map(message).collect();
                    let body = serde_json::to_vec(&Batch { messages }).expect("encode");
                    api.post_encoded("/v1/teams/bus/messages/batch", body, 201)
                        .await;
                }
                for _ in 0..n {
                    lat.push(t0.elapsed());
                }
                i += n;
            }
            lat
        }));
    }
    let mut post_lat = Latencies::default();
    for p in posters {
        post_lat.extend(p.await.expect("poster"));
    }
    let elapsed = started.elapsed();
    let total = per_poster * sizes.workers.max(1);
    let mut delivery = Latencies::default();
    while delivery.0.len() < total {
        match tokio::time::timeout(Duration::from_secs(30), lat_rx.recv()).await {
            Ok(Some(d)) => delivery.push(d),
            _ => panic!(
                "only {} of {total} messages were delivered",
                delivery.0.len()
            ),
        }
    }
    let (p50, p99, max) = delivery.summary();
    drop(coord);
    Figures::new("bus", "posts", total, elapsed, &mut post_lat)
        .note(
            "latency",
            if batch == 1 {
                "post round trip".to_string()
            } else {
                format!("round trip of a {batch}-message batched post")
            },
        )
        .note(
            "post→delivery p50/p99/max ms",
            format!("{p50:.2} / {p99:.2} / {max:.2}"),
        )
        .note("subscribers", subscribers)
}

/// A message as posted: typed, so encoding costs the benchmark client little.
#[derive(Serialize)]
struct Outgoing<'a> {
    to: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    summary: &'static str,
    data: SentAt,
}

#[derive(Serialize)]
struct Batch<'a> {
    messages: Vec<Outgoing<'a>>,
}

#[derive(Serialize, Deserialize)]
struct SentAt {
    #[serde(rename = "sentUs")]
    sent_us: u64,
}

/// The only part of a delivered message the subscriber reads (the rest is skipped unparsed).
#[derive(Deserialize)]
struct Delivered {
    data: SentAt,
}
