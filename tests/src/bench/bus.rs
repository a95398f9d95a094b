//! `bus`: P posters send messages, each to one of S subscriber agents that follows its own
//! messages on `/messages/stream?to=<name>`; posts per second, and post → delivery latency.

use super::client::{add_agent, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::Sizes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::json;
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
                let msg: serde_json::Value = serde_json::from_str(&event.data).expect("json");
                let sent = Duration::from_micros(msg["data"]["sentUs"].as_u64().unwrap_or(0));
                let _ = lat_tx.send(base.elapsed().saturating_sub(sent));
            }
        });
        names.push(name);
    }
    drop(lat_tx);
    ready.wait().await;
    let names = Arc::new(names);
    let per_poster = sizes.messages / sizes.workers.max(1);
    let started = Instant::now();
    let mut posters = Vec::new();
    for p in 0..sizes.workers.max(1) {
        let api = add_agent(admin, "bus", &format!("poster{p}"), "tester").await;
        let names = names.clone();
        posters.push(tokio::spawn(async move {
            let mut lat = Latencies::default();
            for i in 0..per_poster {
                let to = &names[(p * per_poster + i) % names.len()];
                let body = json!({"to": to, "type": "impl_progress", "summary": "bench", "data": {"sentUs": base.elapsed().as_micros() as u64}});
                let t0 = Instant::now();
                api.post_ok("/v1/teams/bus/messages", &body, 201).await;
                lat.push(t0.elapsed());
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
        .note("latency", "post round trip")
        .note(
            "post→delivery p50/p99/max ms",
            format!("{p50:.2} / {p99:.2} / {max:.2}"),
        )
        .note("subscribers", subscribers)
}
