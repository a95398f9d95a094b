//! `claim`: N ready tasks, W workers each looping claim → complete; tasks per second end to end.

use super::client::{add_agent, create_tasks, setup_team, BenchClient};
use super::stats::{Figures, Latencies};
use super::thread_cpu::ThreadCpu;
use super::Sizes;
use serde_json::json;
use std::time::Instant;

/// Workers are spread over `replicas` (daemon URLs sharing one database); one replica is the
/// single-daemon case.
pub async fn run(admin: &BenchClient, sizes: &Sizes, replicas: &[String]) -> Figures {
    prepare(admin, sizes, replicas).await.drive().await
}

/// [`run`] on one daemon, with its CPU per task over the claims and completions alone (not the
/// tasks' creation) and the writer thread's part of it.
pub async fn run_measured(admin: &BenchClient, sizes: &Sizes, url: &str, pid: u32) -> Figures {
    let prepared = prepare(admin, sizes, &[url.to_string()]).await;
    let cpu = ThreadCpu::start(pid);
    let figures = prepared.drive().await;
    let tasks = sizes.tasks.max(1) as f64;
    let us = |ns: u64| format!("{:.1} µs", ns as f64 / tasks / 1e3);
    let (all, writer) = (cpu.elapsed_ns(), cpu.elapsed_ns_of("huddle-writer"));
    figures
        .note("daemon CPU per task, claims and completions only", us(all))
        .note("writer thread CPU per task", us(writer))
}

/// A team with its tasks created and its workers registered: what is timed is only
/// [`Prepared::drive`], so a caller can measure CPU around it alone.
pub struct Prepared {
    workers: Vec<BenchClient>,
    /// Declared on every claim, when set.
    model: Option<String>,
    batch: usize,
    tasks: usize,
    replicas: usize,
}

pub async fn prepare(admin: &BenchClient, sizes: &Sizes, replicas: &[String]) -> Prepared {
    let coord = setup_team(admin, "claim").await;
    let tasks = (1..=sizes.tasks)
        .map(|i| json!({"id": format!("TEST-{i}"), "subject": "bench"}))
        .collect();
    create_tasks(&coord, "claim", tasks).await;
    let mut workers = Vec::new();
    for w in 0..sizes.workers {
        let worker = add_agent(admin, "claim", &format!("w{w}"), "tester").await;
        workers.push(worker.on(&replicas[w % replicas.len().max(1)]));
    }
    Prepared {
        workers,
        model: sizes.claim_model.clone(),
        batch: sizes.claim_batch.clamp(1, 100),
        tasks: sizes.tasks,
        replicas: replicas.len(),
    }
}

impl Prepared {
    /// Every worker loops claim → complete until the queue is empty.
    pub async fn drive(self) -> Figures {
        let Prepared {
            workers,
            model,
            batch,
            tasks: expected,
            replicas,
        } = self;
        let mut request = if batch > 1 {
            json!({ "max": batch })
        } else {
            json!({})
        };
        if let Some(model) = model {
            request["model"] = json!(model);
        }
        let started = Instant::now();
        let handles: Vec<_> = workers
            .into_iter()
            .map(|api| {
                let request = request.clone();
                tokio::spawn(async move {
                    let mut lat = Latencies::default();
                    let mut done = 0usize;
                    loop {
                        let t0 = Instant::now();
                        let (status, body) = api
                            .post("/v1/teams/claim/tasks/claim", &request)
                            .await
                            .expect("claim");
                        if status == 204 {
                            break;
                        }
                        assert_eq!(status, 200, "claim: {body}");
                        let tasks = if batch > 1 {
                            body["tasks"].as_array().cloned().unwrap_or_default()
                        } else {
                            vec![body]
                        };
                        if batch > 1 {
                            // Batched completion: one request for everything this claim returned.
                            let items: Vec<_> =
                                tasks.iter().map(|t| json!({"id": t["id"]})).collect();
                            api.post_ok(
                                "/v1/teams/claim/tasks/complete",
                                &json!({"tasks": items}),
                                200,
                            )
                            .await;
                            for _ in &tasks {
                                lat.push(t0.elapsed());
                            }
                            done += tasks.len();
                        } else {
                            let id = tasks[0]["id"].as_str().expect("id");
                            api.post_ok(
                                &format!("/v1/teams/claim/tasks/{id}/complete"),
                                &json!({}),
                                200,
                            )
                            .await;
                            lat.push(t0.elapsed());
                            done += 1;
                        }
                    }
                    (done, lat)
                })
            })
            .collect();
        let mut total = 0;
        let mut lat = Latencies::default();
        for h in handles {
            let (n, l) = h.await.expect("worker");
            total += n;
            lat.extend(l);
        }
        let elapsed = started.elapsed();
        assert_eq!(total, expected, "every task completed exactly once");
        let name = if replicas > 1 {
            format!("claim ({replicas} replicas)")
        } else {
            "claim".to_string()
        };
        Figures::new(&name, "tasks", total, elapsed, &mut lat)
            .note("latency", "claim start → task completed")
    }
}
