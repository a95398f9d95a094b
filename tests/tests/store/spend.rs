//! Model spending on every backend (SQLite, PostgreSQL direct and through pgbouncer): a daily
//! budget judged against settled tokens, testers racing the last of it overspending by at most
//! one call each, settlements of one's own calls only, once, and a stale budget change refused.

use huddle_daemon::store::rules::spend::Reserved;
use huddle_daemon::store::{Store, StoreError};
use huddle_sdk::wire::{codes, BudgetPeriod, BudgetSettings, ReserveSpend, SettleSpend};
use huddle_tests::store::{backends, team};
use std::sync::Arc;

fn call(task: &str) -> ReserveSpend {
    ReserveSpend {
        model: "m1".into(),
        task: Some(task.into()),
    }
}

#[tokio::test]
async fn racing_testers_overspend_a_daily_budget_by_at_most_one_call_each() {
    const CALL: u64 = 25;
    for (store, _keep) in backends().await {
        let (coord, tester, executor) = team(&*store, "qa").await;
        let budget = BudgetSettings {
            period: BudgetPeriod::Day,
            max_tokens: Some(500),
            ..BudgetSettings::default()
        };
        let set = store
            .set_budget(coord.team_id, &coord.agent, Some(0), budget.clone())
            .await
            .unwrap();
        assert_eq!(set.version, 1);
        assert!(matches!(
            store
                .set_budget(coord.team_id, &coord.agent, Some(0), budget)
                .await,
            Err(StoreError::StaleVersion { .. })
        ));
        let mut jobs = Vec::new();
        for caller in [tester.clone(), executor.clone(), coord.clone()] {
            let store: Arc<dyn Store> = store.clone();
            jobs.push(tokio::spawn(async move {
                let mut granted = 0u64;
                while let Reserved::Granted(c) = store
                    .reserve_spend(&caller, call("TEST-001"))
                    .await
                    .unwrap()
                {
                    let tokens = SettleSpend {
                        prompt_tokens: CALL,
                        completion_tokens: 0,
                    };
                    store.settle_spend(&caller, c.id, tokens).await.unwrap();
                    granted += 1;
                }
                granted
            }));
        }
        let mut granted = 0;
        for j in jobs {
            granted += j.await.unwrap();
        }
        let view = store.budget(coord.team_id).await.unwrap();
        assert_eq!(view.spent.tokens, granted * CALL);
        assert!(view.exhausted);
        assert!(
            granted * CALL >= 500 && granted * CALL < 500 + 3 * CALL,
            "{granted}"
        );
        assert!(store.budget_exhausted(coord.team_id).await.unwrap());
        let report = store.spend_report(coord.team_id, None).await.unwrap();
        assert_eq!(report.total.calls, granted);
        assert_eq!(report.by_day.len(), 1);
        assert_eq!(
            report.by_day[0].key, view.period,
            "a daily budget's period is today"
        );

        // Settling: one's own call only, and once.
        let (other, _, _) = team(&*store, "dev").await;
        let Reserved::Granted(c) = store.reserve_spend(&other, call("TEST-002")).await.unwrap()
        else {
            panic!("a team without a budget is never refused");
        };
        let none = SettleSpend::default();
        assert!(matches!(
            store.settle_spend(&tester, c.id, none).await,
            Err(StoreError::NotFound { .. })
        ));
        store.settle_spend(&other, c.id, none).await.unwrap();
        match store.settle_spend(&other, c.id, none).await {
            Err(StoreError::Conflict { code, .. }) => assert_eq!(code, codes::ALREADY_SETTLED),
            other => panic!("expected already_settled, got {other:?}"),
        }
        assert!(!store.budget_exhausted(other.team_id).await.unwrap());
        let teams = store.spend_by_team().await.unwrap();
        let names: Vec<&str> = teams.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["dev", "qa"]);
    }
}
