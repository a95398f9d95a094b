use super::*;

fn edit(path: &str, search: &str, replace: &str) -> Edit {
    Edit {
        path: path.into(),
        search: search.into(),
        replace: replace.into(),
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.py"), "x = 1\ny = 1\n").unwrap();
    std::fs::write(dir.path().join("src/b.py"), "z = 2\n").unwrap();
    dir
}

fn read(dir: &tempfile::TempDir, rel: &str) -> String {
    std::fs::read_to_string(dir.path().join(rel)).unwrap()
}

#[test]
fn all_edits_apply_and_the_snapshot_undoes_them() {
    let dir = project();
    let applied = apply(
        dir.path(),
        &[
            edit("src/a.py", "x = 1", "x = 3"),
            edit("src/b.py", "z = 2", "z = 4"),
            edit("src/new.py", "", "n = 0\n"),
        ],
        &Policy::tester(),
    )
    .unwrap();
    assert_eq!(applied.files, vec!["src/a.py", "src/b.py", "src/new.py"]);
    assert_eq!(read(&dir, "src/a.py"), "x = 3\ny = 1\n");
    applied.snapshot.restore().unwrap();
    assert_eq!(read(&dir, "src/a.py"), "x = 1\ny = 1\n");
    assert_eq!(read(&dir, "src/b.py"), "z = 2\n");
    assert!(!dir.path().join("src/new.py").exists());
}

#[test]
fn one_bad_edit_refuses_the_whole_reply() {
    let dir = project();
    let refused = apply(
        dir.path(),
        &[
            edit("src/b.py", "z = 2", "z = 4"),
            edit("src/a.py", "= 1", "= 5"),
        ],
        &Policy::tester(),
    )
    .unwrap_err();
    assert_eq!(
        refused,
        vec![Refusal::Ambiguous {
            path: "src/a.py".into(),
            count: 2
        }]
    );
    assert_eq!(read(&dir, "src/b.py"), "z = 2\n", "nothing written");
    let refused = apply(
        dir.path(),
        &[edit("src/a.py", "w = 9", "")],
        &Policy::tester(),
    )
    .unwrap_err();
    assert_eq!(
        refused,
        vec![Refusal::NoMatch {
            path: "src/a.py".into()
        }]
    );
}

#[test]
fn edits_outside_the_root_are_refused_before_anything_is_read() {
    let dir = project();
    let refused = apply(
        dir.path(),
        &[edit("../../outside", "a", "b")],
        &Policy::tester(),
    )
    .unwrap_err();
    assert_eq!(
        refused[0].to_string(),
        "`../../outside` is outside the project; every path must stay inside the project root"
    );
}
