use super::*;

#[test]
fn paths_must_stay_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    assert!(resolve(dir.path(), "src/a.py").is_ok());
    assert_eq!(resolve(dir.path(), "src/../a.py").unwrap().1, "a.py");
    for bad in [
        "../../outside",
        "/etc/passwd",
        "src/../../x",
        "",
        "..",
        "a\\b",
    ] {
        assert!(
            matches!(resolve(dir.path(), bad), Err(Refusal::Outside { .. })),
            "{bad}"
        );
    }
    std::os::unix::fs::symlink("/tmp", dir.path().join("escape")).unwrap();
    assert!(matches!(
        resolve(dir.path(), "escape/x.py"),
        Err(Refusal::Outside { .. })
    ));
}

#[test]
fn lockfiles_git_ci_and_non_tests_for_executors_are_refused() {
    let any = Policy::tester();
    for bad in [
        ".git/config",
        "package-lock.json",
        "sub/Cargo.lock",
        ".github/workflows/ci.yml",
        "node_modules/x/index.js",
    ] {
        assert!(
            matches!(check_path(bad, &any), Err(Refusal::Forbidden { .. })),
            "{bad}"
        );
    }
    assert!(check_path("src/math.js", &any).is_ok());
    let exec = Policy::executor();
    let e = check_path("src/math.js", &exec).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`src/math.js` is not a test file; an executor may change test files only"
    );
    assert!(check_path("src/math.test.js", &exec).is_ok());
    assert!(check_path("tests/test_calc.py", &exec).is_ok());
}

#[test]
fn test_files_are_recognised_by_convention() {
    for t in [
        "tests/test_a.py",
        "a_test.py",
        "conftest.py",
        "src/a.spec.ts",
        "x/a_test.go",
        "tests/it.rs",
        "src/__tests__/a.js",
    ] {
        assert!(is_test_file(t), "{t}");
    }
    for s in [
        "pkg/calc.py",
        "src/math.js",
        "main.go",
        "src/lib.rs",
        "tests/data.json",
    ] {
        assert!(!is_test_file(s), "{s}");
    }
}

#[test]
fn skip_markers_and_type_escapes_are_refused() {
    let cases = [
        (
            "def test_a():\n",
            "@pytest.mark.skip\ndef test_a():\n",
            "@pytest.mark.skip",
        ),
        ("it('a', f)", "it.skip('a', f)", "it.skip"),
        ("it('a', f)", "xit('a', f)", "xit"),
        ("test('a', f)", "test.only('a', f)", ".only"),
        (
            "func TestA(t *testing.T) {",
            "func TestA(t *testing.T) { t.Skip(\"x\")",
            "t.Skip",
        ),
        (
            "#[test]\nfn a() {}",
            "#[test]\n#[ignore]\nfn a() {}",
            "#[ignore]",
        ),
        ("let x = f();", "// @ts-ignore\nlet x = f();", "@ts-ignore"),
        ("let x = f();", "let x = f() as any;", "as any"),
    ];
    for (before, after, marker) in cases {
        match check_content("t", before, after, &Policy::executor()) {
            Err(Refusal::Marker { marker: m, .. }) => assert_eq!(m, marker),
            other => panic!("{after}: {other:?}"),
        }
    }
    // Existing markers may stay; `exit(` is not `xit(`.
    assert!(check_content(
        "t",
        "it.skip('a')\n",
        "it.skip('a')\nprocess.exit(1)\n",
        &Policy::executor()
    )
    .is_ok());
}

#[test]
fn deleting_assertions_is_refused_and_only_the_executor_may_change_them() {
    let exec = Policy::executor();
    let before = "def test_a():\n    assert f() == 1\n    assert g() == 2\n";
    let changed = "def test_a():\n    assert f() == 3\n    assert g() == 2\n";
    assert!(check_content(
        "tests/test_a.py",
        before,
        "def test_a():\n    assert f() == 1\n",
        &exec
    )
    .is_err());
    assert!(check_content("tests/test_a.py", before, changed, &exec).is_ok());
    assert!(check_content(
        "a.test.js",
        "expect(a).toBe(1);",
        "expect(a).toBe(2);",
        &exec
    )
    .is_ok());
    assert!(check_content("a.test.js", "expect(a).toBe(1);", "a;", &exec).is_err());
    // A tester allowed to edit tests still may not change what they expect.
    let tester = Policy {
        test_edits: true,
        ..Policy::tester()
    };
    let e = check_content("tests/test_a.py", before, changed, &tester).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the edit to `tests/test_a.py` changes what a test expects (`assert f() == 1`); fix the code under test instead"
    );
    let multi = "expect(avg([5]))\n  .toBe(5);\n";
    assert!(check_content("a.test.js", multi, &multi.replace("5)", "2.5)"), &tester).is_err());
    // Moving or re-indenting an assertion, or fixing an import, is not a changed expectation.
    let moved = "import x\ndef test_a():\n        assert g() == 2\n        assert f() == 1\n";
    assert!(check_content("tests/test_a.py", before, moved, &tester).is_ok());
}

#[test]
fn the_tester_leaves_tests_and_test_configuration_alone_unless_allowed() {
    let tester = Policy::tester();
    let e = check_path("tests/test_a.py", &tester).unwrap_err();
    assert!(matches!(e, Refusal::TestEdit { .. }), "{e}");
    assert!(e.to_string().contains("allowTestEdits"), "{e}");
    for config in [
        "pytest.ini",
        "tests/conftest.py",
        "jest.config.js",
        "tox.ini",
    ] {
        for policy in [Policy::tester(), Policy::executor()] {
            let e = check_path(config, &policy).unwrap_err();
            assert!(matches!(e, Refusal::TestConfig { .. }), "{config}: {e}");
        }
    }
    let allowed = Policy {
        test_edits: true,
        test_config_edits: true,
        ..Policy::tester()
    };
    assert!(check_path("tests/test_a.py", &allowed).is_ok());
    assert!(check_path("pytest.ini", &allowed).is_ok());
    let py = "[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    let deselect = py.replace("-q", "-q --deselect tests/test_a.py::test_x");
    assert!(matches!(
        check_content("pyproject.toml", py, &deselect, &tester),
        Err(Refusal::TestConfig { .. })
    ));
    assert!(check_content("pyproject.toml", py, &deselect, &allowed).is_ok());
}

#[test]
fn a_scope_entry_is_a_glob_or_a_path_at_a_component_boundary() {
    assert!(in_scope("src/parser/a.py", "src/parser"));
    assert!(in_scope("src/parser/a.py", "./src/parser/"));
    assert!(in_scope("src/parser.py", "src/parser.py"));
    assert!(!in_scope("src/parser_old.py", "src/parser"));
    assert!(in_scope("src/parser/deep/a.py", "src/parser/**"));
    assert!(in_scope("src/a.py", "src/*.py"));
    assert!(
        !in_scope("src/deep/a.py", "src/*.py"),
        "* stays within a directory"
    );
    assert!(!in_scope("lib/a.py", "src/**"));
}
