//! The claim queue: who is woken, who is passed over, and parcels left for the store.

use super::*;
use std::time::Duration;

fn ready(prefix: &str, owner: Option<&str>) -> ReadyTask {
    ReadyTask {
        prefix: prefix.into(),
        owner: owner.map(Into::into),
        project: None,
    }
}

fn ready_in(project: Option<&str>) -> ReadyTask {
    ReadyTask {
        project: project.map(Into::into),
        ..ready("TEST", None)
    }
}

fn filter(name: &str, strict: bool) -> ProjectFilter {
    ProjectFilter {
        name: name.into(),
        strict,
    }
}

fn prefixes(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

async fn is_woken(t: &WaitTicket) -> bool {
    tokio::time::timeout(Duration::from_millis(0), t.woken())
        .await
        .is_ok()
}

#[tokio::test]
async fn a_ready_task_wakes_only_the_oldest_claimer_that_could_take_it() {
    let q = Arc::new(ClaimWaiters::default());
    let qarun = q.register("e1", "executor", &prefixes(&["QARUN"]), None);
    let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let second = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    assert!(q.wake_one(&ready("TEST", None)));
    assert!(is_woken(&first).await);
    assert!(!is_woken(&second).await);
    assert!(!is_woken(&qarun).await);
    assert_eq!(q.len(), 2);
}

#[tokio::test]
async fn an_owned_task_wakes_its_owner_or_a_claimer_of_its_role() {
    let q = Arc::new(ClaimWaiters::default());
    let other = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let owner = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    assert!(q.wake_one(&ready("TEST", Some("t2"))));
    assert!(is_woken(&owner).await);
    assert!(!is_woken(&other).await);
    assert!(q.wake_one(&ready("TEST", Some("tester"))));
    assert!(is_woken(&other).await);
    assert!(!q.wake_one(&ready("TEST", Some("nobody"))));
}

#[tokio::test]
async fn a_project_task_wakes_only_a_claimer_whose_filter_admits_it() {
    let q = Arc::new(ClaimWaiters::default());
    let shop = filter("shop", false);
    let calc_only = filter("calc", true);
    let other = q.register("t1", "tester", &prefixes(&["TEST"]), Some(&shop));
    let strict = q.register("t2", "tester", &prefixes(&["TEST"]), Some(&calc_only));
    assert!(q.wake_one(&ready_in(Some("calc"))));
    assert!(is_woken(&strict).await);
    assert!(!is_woken(&other).await);
    assert!(!q.wake_one(&ready_in(Some("calc"))));
    strict.take_wake();
    // A task naming no project: any claimer but a strict one.
    let strict = q.register("t2", "tester", &prefixes(&["TEST"]), Some(&calc_only));
    assert!(q.wake_one(&ready_in(None)));
    assert!(is_woken(&other).await);
    assert!(!is_woken(&strict).await);
}

#[tokio::test]
async fn a_woken_claimer_that_leaves_without_looking_passes_the_wake_on() {
    let q = Arc::new(ClaimWaiters::default());
    let gone = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let next = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    q.wake_one(&ready("TEST", None));
    drop(gone);
    assert!(is_woken(&next).await);
    assert!(q.is_empty());
}

#[tokio::test]
async fn a_claimer_that_used_its_wake_passes_nothing_on() {
    let q = Arc::new(ClaimWaiters::default());
    let used = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let next = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    q.wake_one(&ready("TEST", None));
    used.woken().await;
    used.take_wake();
    assert!(!is_woken(&next).await);
    assert_eq!(q.len(), 1);
}

#[tokio::test]
async fn wake_all_wakes_everyone_and_empties_the_queue() {
    let q = Arc::new(ClaimWaiters::default());
    let a = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let b = q.register("e1", "executor", &prefixes(&["QARUN"]), None);
    q.wake_all();
    assert!(is_woken(&a).await && is_woken(&b).await);
    assert!(q.is_empty());
    drop(a); // nothing to pass on
    assert!(q.is_empty());
}

fn parcel_text(parcel: Parcel) -> String {
    *parcel.downcast::<String>().expect("the parcel left")
}

#[tokio::test]
async fn the_parcel_taken_is_that_of_the_claimer_the_task_would_wake() {
    let q = Arc::new(ClaimWaiters::default());
    let executor = q.register("e1", "executor", &prefixes(&["QARUN"]), None);
    let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let second = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    executor.park(Box::new("e1".to_string()));
    second.park(Box::new("t2".to_string()));
    // The oldest tester left no parcel: nothing is taken, and it is woken after the commit.
    assert!(q.take_parcel(&ready("TEST", None)).is_none());
    first.park(Box::new("t1".to_string()));
    let (ticket, parcel) = q.take_parcel(&ready("TEST", None)).expect("t1's parcel");
    assert_eq!(parcel_text(parcel), "t1");
    // While it is served, the next task goes to the next claimer, and no wake reaches it.
    let (_, next) = q.take_parcel(&ready("TEST", None)).expect("t2's parcel");
    assert_eq!(parcel_text(next), "t2");
    assert!(
        !q.wake_one(&ready("TEST", None)),
        "both testers are being served"
    );
    assert!(!is_woken(&first).await);
    // Served: it leaves the queue, and cannot take its parcel back (its answer is coming).
    q.served(ticket, None);
    assert!(!first.withdraw());
    assert_eq!(q.len(), 2, "the executor and t2 are still queued");
}

#[tokio::test]
async fn a_claimer_served_nothing_keeps_its_place_and_its_parcel() {
    let q = Arc::new(ClaimWaiters::default());
    let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let second = q.register("t2", "tester", &prefixes(&["TEST"]), None);
    first.park(Box::new("t1".to_string()));
    let (ticket, parcel) = q.take_parcel(&ready("TEST", None)).unwrap();
    q.served(ticket, Some(parcel));
    // Still the oldest: the next task's parcel is its own again.
    let (_, again) = q.take_parcel(&ready("TEST", None)).unwrap();
    assert_eq!(parcel_text(again), "t1");
    assert!(!is_woken(&second).await);
}

#[tokio::test]
async fn a_parcel_withdrawn_is_not_served_and_a_gone_claimer_gets_none_back() {
    let q = Arc::new(ClaimWaiters::default());
    let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    first.park(Box::new("t1".to_string()));
    assert!(first.withdraw(), "not taken yet: nothing is in flight");
    assert!(q.take_parcel(&ready("TEST", None)).is_none());
    // Taken, then the claimer leaves before the store is done: nothing is queued again.
    first.park(Box::new("t1".to_string()));
    let (ticket, parcel) = q.take_parcel(&ready("TEST", None)).unwrap();
    drop(first);
    q.served(ticket, Some(parcel));
    assert!(q.is_empty());
    // And a wake of a claimer that left a parcel still works as a wake.
    let waker = q.register("t3", "tester", &prefixes(&["TEST"]), None);
    waker.park(Box::new("t3".to_string()));
    assert!(q.wake_one(&ready("TEST", None)));
    assert!(is_woken(&waker).await);
    assert!(waker.withdraw());
}

#[tokio::test]
async fn a_parcel_handed_back_after_its_claimer_stopped_waiting_is_dropped_not_parked_again() {
    let q = Arc::new(ClaimWaiters::default());
    let first = q.register("t1", "tester", &prefixes(&["TEST"]), None);
    let (answer_to, answered) = tokio::sync::oneshot::channel::<()>();
    first.park(Box::new(answer_to));
    let (ticket, parcel) = q.take_parcel(&ready("TEST", None)).unwrap();
    assert!(
        !first.withdraw(),
        "the store holds it: its answer is coming"
    );
    // The store claimed nothing with it. Parked again, nobody would answer the claimer, which
    // is waiting for that answer: dropping it answers (the sender is gone).
    q.served(ticket, Some(parcel));
    assert!(answered.await.is_err());
    assert!(q.take_parcel(&ready("TEST", None)).is_none());
    assert!(
        q.wake_one(&ready("TEST", None)),
        "still queued as a plain waiter"
    );
}
