//! Helpers for the SDK, worker and CLI tests: typed clients on a test daemon, the `huddle`
//! binary, and a TCP proxy that can lose answers or cut the network.

use crate::{TestDaemon, ADMIN};
use huddle_sdk::wire::{NewTask, Role};
use huddle_sdk::Client;

/// A typed client with the admin token (no team).
pub fn admin(d: &TestDaemon) -> Client {
    Client::new(&d.url, ADMIN).expect("admin client")
}

/// Creates `team` and its coordinator through the SDK; returns the coordinator's client.
pub async fn team(d: &TestDaemon, team: &str) -> Client {
    let admin = admin(d);
    admin.create_team(team).await.expect("team created");
    agent(d, team, "coordinator", Role::Coordinator).await
}

/// Adds an agent through the admin token; returns a client acting as it in `team`.
pub async fn agent(d: &TestDaemon, team: &str, name: &str, role: Role) -> Client {
    let created = admin(d)
        .with_team(team)
        .create_agent(name, role)
        .await
        .expect("agent created");
    admin(d).with_token(&created.token).with_team(team)
}

/// A task to create with only a subject and an id.
pub fn task(id: &str, subject: &str) -> NewTask {
    NewTask {
        id: Some(id.to_string()),
        subject: subject.to_string(),
        ..NewTask::default()
    }
}
