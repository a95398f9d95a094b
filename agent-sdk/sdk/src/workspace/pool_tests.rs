//! The pool on a real repository: reuse resets and cleans, the bound holds, the least recently
//! used goes first, and a crash's leftovers are tidied.

use super::git::{git, Repo};
use super::pool::{Pool, Taken};
use std::path::Path;

async fn repository() -> (tempfile::TempDir, Repo, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = &dir.path().join("repo");
    std::fs::create_dir(root).unwrap();
    std::fs::write(root.join("code.py"), "x = 1\n").unwrap();
    std::fs::write(root.join(".gitignore"), "build/\nnode_modules/\n").unwrap();
    std::fs::create_dir(root.join("node_modules")).unwrap();
    std::fs::write(root.join("node_modules/dep.js"), "").unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "code.py", ".gitignore"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    ] {
        git(root, args).await.unwrap();
    }
    let repo = Repo::of(root).await.unwrap();
    let head = repo.commit_of("HEAD").await.unwrap();
    (dir, repo, head)
}

async fn slot(pool: &Pool, base: &str) -> super::pool::Slot {
    match pool.take(base).await.unwrap() {
        Taken::Slot(s) => s,
        Taken::Full => panic!("the pool is full"),
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test]
async fn a_reused_worktree_is_reset_and_cleaned_but_keeps_ignored_installs() {
    let (dir, repo, head) = repository().await;
    let pool = Pool::new(repo.clone(), 2, &dir.path().join("pools"));
    let first = slot(&pool, &head).await;
    let path = first.path.clone();
    assert!(
        !path.starts_with(&repo.top),
        "outside the checkout: {}",
        path.display()
    );
    assert!(
        path.join("node_modules").join("dep.js").exists(),
        "the checkout's installs are linked in"
    );
    std::fs::write(path.join("code.py"), "x = 2\n").unwrap();
    std::fs::write(path.join("junk.py"), "").unwrap();
    std::fs::create_dir(path.join("build")).unwrap();
    std::fs::write(path.join("build/out.o"), "").unwrap();
    drop(first);

    let again = slot(&pool, &head).await;
    assert_eq!(again.path, path, "the free worktree is reused");
    assert_eq!(read(&path.join("code.py")), "x = 1\n");
    assert!(
        !path.join("junk.py").exists(),
        "untracked files are removed"
    );
    assert!(
        path.join("build/out.o").exists(),
        "ignored build output is kept"
    );
    assert_eq!(
        git(&repo.top, &["status", "--porcelain"]).await.unwrap(),
        ""
    );
}

#[tokio::test]
async fn the_pool_is_bounded_and_evicts_the_least_recently_used() {
    let (dir, repo, head) = repository().await;
    let pool = Pool::new(repo.clone(), 2, &dir.path().join("pools"));
    let a = slot(&pool, &head).await;
    let b = slot(&pool, &head).await;
    assert_ne!(a.path, b.path);
    assert!(
        matches!(pool.take(&head).await.unwrap(), Taken::Full),
        "both in use at the bound"
    );
    let (a_path, b_path) = (a.path.clone(), b.path.clone());
    drop(a);
    drop(b);
    // `a` was taken first, so it is the least recently used; a pool of one keeps `b`.
    let small = Pool::new(repo.clone(), 1, &dir.path().join("pools"));
    let kept = slot(&small, &head).await;
    assert_eq!(kept.path, b_path, "the most recently used is reused");
    assert!(!a_path.exists(), "the least recently used is evicted");
    let listed = git(&repo.top, &["worktree", "list"]).await.unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
}

#[tokio::test]
async fn leftovers_of_a_crash_are_tidied() {
    let (dir, repo, head) = repository().await;
    let pool = Pool::new(repo.clone(), 4, &dir.path().join("pools"));
    let a = slot(&pool, &head).await;
    let gone = a.path.clone();
    drop(a);
    // A worktree deleted by hand, and a half-made one git never registered.
    std::fs::remove_dir_all(&gone).unwrap();
    let half = gone.with_file_name("wt-9");
    std::fs::create_dir_all(&half).unwrap();
    pool.tidy().await;
    assert!(!half.exists());
    let listed = git(&repo.top, &["worktree", "list"]).await.unwrap();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let again = slot(&pool, &head).await;
    assert!(again.path.join("code.py").exists());

    // Another repository's pool under the same root, whose clone was deleted, goes too.
    let (other_dir, other, other_head) = repository().await;
    let other_pool = Pool::new(other.clone(), 4, &dir.path().join("pools"));
    drop(slot(&other_pool, &other_head).await);
    assert!(other_pool.dir().exists());
    drop(other_dir);
    pool.tidy().await;
    assert!(
        !other_pool.dir().exists(),
        "a deleted repository's pool is removed"
    );
    assert!(pool.dir().exists());
}
