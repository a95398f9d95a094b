//! A claim takes only tasks whose prefix it names, whether it names one, two (compared in
//! place on SQLite) or more (read from a list), oldest first.

use huddle_daemon::store::{Caller, Store};
use huddle_tests::store::{backends, task, team};

async fn claim(store: &dyn Store, who: &Caller, prefixes: &[&str]) -> Vec<String> {
    let prefixes = prefixes.iter().map(|p| p.to_string()).collect();
    store
        .claim_project_tasks(who, prefixes, None, 60_000, 50)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect()
}

/// Ids in a stable order: tasks created in one call share their creation time.
fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[tokio::test]
async fn a_claim_takes_the_prefixes_it_names_one_two_or_many() {
    for (store, _dir) in backends().await {
        let store = &*store;
        let (coord, tester, _) = team(store, "qa").await;
        let mut ids = Vec::new();
        for round in 1..=2 {
            for prefix in ["TEST", "QARUN", "FIX", "DOC", "LINT"] {
                ids.push(format!("{prefix}-{round}"));
            }
        }
        let tasks = ids.iter().map(|id| task(id, &[])).collect();
        store.create_tasks(&coord, tasks).await.unwrap();

        assert_eq!(claim(store, &tester, &["NONE"]).await, Vec::<String>::new());
        assert_eq!(
            claim(store, &tester, &["QARUN"]).await,
            ["QARUN-1", "QARUN-2"]
        );
        // The same prefix twice is one prefix.
        assert_eq!(
            claim(store, &tester, &["TEST", "TEST"]).await,
            ["TEST-1", "TEST-2"]
        );
        assert_eq!(
            sorted(claim(store, &tester, &["DOC", "FIX"]).await),
            ["DOC-1", "DOC-2", "FIX-1", "FIX-2"]
        );
        assert_eq!(
            sorted(claim(store, &tester, &["NONE", "LINT", "QARUN", "TEST"]).await),
            ["LINT-1", "LINT-2"]
        );
        assert!(
            claim(store, &tester, &["TEST", "QARUN", "FIX", "DOC", "LINT"])
                .await
                .is_empty()
        );
    }
}
