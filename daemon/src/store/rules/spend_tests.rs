//! The spend rules' unit tests.

use super::*;
use huddle_wire::ModelPrice;

fn stored(max_tokens: u64) -> StoredBudget {
    StoredBudget {
        version: 2,
        settings: BudgetSettings {
            max_tokens: Some(max_tokens),
            ..Default::default()
        },
        updated_by: "coord".into(),
        updated_at: 0,
        warned: None,
        exhausted: None,
    }
}

fn spent(tokens: u64) -> SpendTotals {
    totals(1, tokens as i64, 0, 0)
}

#[test]
fn cost_is_priced_per_million_and_rounded_up() {
    let mut b = BudgetSettings::default();
    b.prices.insert(
        "m".into(),
        ModelPrice {
            prompt_per_million: 3_000_000,
            completion_per_million: 15_000_000,
        },
    );
    assert_eq!(cost(Some(&b), "m", 1_000, 100), 3_000 + 1_500);
    assert_eq!(cost(Some(&b), "m", 1, 0), 3);
    assert_eq!(cost(Some(&b), "other", 1_000, 100), 0);
    assert_eq!(cost(None, "m", 1_000, 100), 0);
}

#[test]
fn a_warning_then_exhaustion_each_once_per_version_and_period() {
    let mut s = stored(1_000);
    assert_eq!(notice_due(&s, "total", &spent(100), &spent(700)), None);
    assert_eq!(
        notice_due(&s, "total", &spent(700), &spent(800)),
        Some(NoticeKind::Warning)
    );
    s.warned = Some(notice_key(2, "total"));
    assert_eq!(notice_due(&s, "total", &spent(800), &spent(900)), None);
    assert_eq!(
        notice_due(&s, "total", &spent(900), &spent(1_000)),
        Some(NoticeKind::Exhausted)
    );
    s.exhausted = Some(notice_key(2, "total"));
    assert_eq!(notice_due(&s, "total", &spent(1_000), &spent(1_200)), None);
    // A raised budget is a new version: it warns again.
    s.version = 3;
    s.settings.max_tokens = Some(2_000);
    assert_eq!(
        notice_due(&s, "total", &spent(1_500), &spent(1_700)),
        Some(NoticeKind::Warning)
    );
}

#[test]
fn the_team_limit_is_judged_before_the_tasks() {
    let mut b = stored(1_000).settings;
    b.task_max_tokens = Some(50);
    assert!(judge(&b, "total", &spent(999), Some(("TEST-001", &spent(49)))).is_none());
    let task = judge(&b, "total", &spent(999), Some(("TEST-001", &spent(50)))).unwrap();
    assert!(task.to_string().contains("TEST-001"), "{task}");
    let team = judge(&b, "total", &spent(1_000), Some(("TEST-001", &spent(50)))).unwrap();
    assert!(team.to_string().contains("team"), "{team}");
    assert!(judge(&BudgetSettings::default(), "total", &spent(1 << 40), None).is_none());
}

#[test]
fn bad_budgets_are_refused() {
    let b = BudgetSettings {
        warn_percent: Some(0),
        ..Default::default()
    };
    assert!(check_budget(&b).is_err());
    let mut b = BudgetSettings::default();
    for i in 0..=MAX_PRICED_MODELS {
        b.prices.insert(format!("m{i}"), ModelPrice::default());
    }
    assert!(check_budget(&b).is_err());
    assert_eq!(day_of(0), "1970-01-01");
}
