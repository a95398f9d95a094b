//! Storage faults on a real filesystem: the data directory on a small tmpfs that fills up, or
//! that is mounted read-only. Writes answer 503 `store_unavailable`, reads keep working, nothing
//! acknowledged is lost, the file stays whole, and writes resume once the fault is gone.
//! Needs root (mount); in CI a failed mount fails the test.

use huddle_tests::{test_settings, Api, TestDaemon};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted on a fresh directory; unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("mnt");
        std::fs::create_dir(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status();
        if !ok.is_ok_and(|s| s.success()) {
            assert!(
                std::env::var("CI").is_err(),
                "these tests need to mount a tmpfs (run as root); CI must run them"
            );
            eprintln!("skipping: cannot mount a tmpfs here (not root); CI runs this test as root");
            return None;
        }
        Some(Tmpfs {
            dir,
            _parent: parent,
        })
    }

    fn remount(&self, mode: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "remount {mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn integrity(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("pragma integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

async fn post(api: &Api, i: usize, pad: usize) -> huddle_tests::Reply {
    api.post(&api.t("/messages"), json!({"to": "*", "type": "impl_progress", "summary": format!("m{i}"), "data": {"pad": "x".repeat(pad)}}))
        .await
}

#[tokio::test]
async fn a_full_disk_answers_503_loses_nothing_and_recovers_when_space_returns() {
    let Some(fs) = Tmpfs::mount("6m") else { return };
    let data = fs.dir.join("data");
    let d = TestDaemon::start_on(test_settings(&data)).await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "before"}),
    )
    .await
    .expect_status(201);

    // Fill the filesystem, then keep posting until the store refuses.
    let filler = fs.dir.join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=64k"])
        .arg(format!("of={}", filler.display()))
        .output();
    let mut acknowledged = Vec::new();
    let mut refused = None;
    for i in 0..2000 {
        let r = post(&c, i, 30_000).await;
        match r.status.as_u16() {
            201 => acknowledged.push(r.body["seq"].as_i64().unwrap()),
            503 => {
                refused = Some(r);
                break;
            }
            s => panic!("unexpected {s}: {}", r.body),
        }
    }
    let refused = refused.expect("a full disk refuses writes");
    assert_eq!(refused.body["error"]["code"], "store_unavailable");
    assert!(refused.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("disk full"));
    // Reads still work while writes cannot, and readiness says so.
    c.get(&c.t("/tasks/TEST-001")).await.expect_status(200);
    c.get(&c.t("/messages?limit=1")).await.expect_status(200);
    let ready = c.get("/readyz").await;
    assert_eq!(ready.status.as_u16(), 503, "{}", ready.body);
    assert_eq!(ready.body["status"], "read_only");

    std::fs::remove_file(&filler).unwrap();
    huddle_tests::eventually(30, "writes resume after space returns", || {
        let c = c.clone();
        async move { post(&c, 9999, 10).await.status.as_u16() == 201 }
    })
    .await;
    assert_eq!(
        c.get("/readyz").await.expect_status(200).body["status"],
        "ready"
    );
    let all = c.get(&c.t("/messages?limit=1000")).await.expect_status(200);
    let seqs: Vec<i64> = all.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    for seq in &acknowledged {
        assert!(seqs.contains(seq), "acknowledged message {seq} is missing");
    }
    assert_eq!(
        seqs,
        (1..=seqs.len() as i64).collect::<Vec<_>>(),
        "no gaps after the refusals"
    );
    let mut d = d;
    d.stop().await;
    integrity(&data.join("huddle.db"));
}

#[tokio::test]
async fn a_read_only_filesystem_answers_503_and_writes_resume_when_it_is_writable() {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let data = fs.dir.join("data");
    let mut d = TestDaemon::start_on(test_settings(&data)).await;
    let c = d.team("qa").await;
    c.post(
        &c.t("/tasks"),
        json!({"id": "TEST-001", "subject": "before"}),
    )
    .await
    .expect_status(201);
    let token = c.token.clone();
    d.stop().await;
    fs.remount("ro");
    let mut d = TestDaemon::start_on(test_settings(&data)).await;
    let c = Api::new(&d.url, &token).in_team("qa");
    let r = c
        .post(
            &c.t("/tasks"),
            json!({"id": "TEST-002", "subject": "during"}),
        )
        .await;
    r.expect_error(503, "store_unavailable");
    let ready = c.get("/readyz").await;
    assert_eq!(ready.status.as_u16(), 503, "{}", ready.body);
    assert_eq!(ready.body["status"], "read_only");
    assert_eq!(
        c.get(&c.t("/tasks/TEST-001")).await.expect_status(200).body["subject"],
        "before"
    );
    c.get(&c.t("/tasks/TEST-002"))
        .await
        .expect_error(404, "not_found");

    fs.remount("rw");
    huddle_tests::eventually(30, "writes resume on a writable filesystem", || {
        let c = c.clone();
        async move {
            c.post(
                &c.t("/tasks"),
                json!({"id": "TEST-002", "subject": "after"}),
            )
            .await
            .status
            .as_u16()
                == 201
        }
    })
    .await;
    d.stop().await;
    integrity(&data.join("huddle.db"));
}
