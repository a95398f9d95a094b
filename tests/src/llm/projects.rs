//! Private copies of the real fixture projects (`tests/fixtures/pytest`, `tests/fixtures/jest`)
//! with the runner-layer oddities taken out (a module that fails to import, deliberately failing
//! tests) and real bugs put into the code under test. Each lives at `<tmp>/ws/project`, so a
//! path like `../../outside` from it lands on `<tmp>/outside`, a file the tests watch.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A project copy and its temporary directory.
pub struct Project {
    pub root: PathBuf,
    /// `<tmp>/outside`: must never change.
    pub outside: PathBuf,
    _dir: tempfile::TempDir,
}

impl Project {
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Runs `git args…` in the project (a throwaway identity, no signing); panics on failure.
    pub fn git(&self, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Every file's text, generated directories left out.
    pub fn tree(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        walk(&self.root, "", &mut out);
        out
    }
}

fn walk(root: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            "node_modules" | ".huddle" | "__pycache__" | ".pytest_cache"
        ) {
            continue;
        }
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().unwrap().is_dir() {
            walk(root, &path, out);
        } else {
            out.insert(
                path.clone(),
                std::fs::read_to_string(root.join(&path)).unwrap_or_default(),
            );
        }
    }
}

fn fixture_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        if [
            "node_modules",
            "target",
            ".huddle",
            "__pycache__",
            ".pytest_cache",
        ]
        .iter()
        .any(|n| name == *n)
        {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        if name == ".venv" {
            // The tier fixtures' virtualenv (scripts/install-test-deps): linked, as installed.
            std::os::unix::fs::symlink(&src, &dst).unwrap();
        } else if e.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Fails loudly when `tool` is not on PATH (CI must never skip these tests).
pub fn require_tool(tool: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
    assert!(
        found,
        "{tool} is required by this test but is not on PATH: run scripts/install-test-deps"
    );
}

fn copy_fixture(name: &str) -> Project {
    let dir = tempfile::Builder::new()
        .prefix(&format!("huddle-fix-{name}-"))
        .tempdir()
        .unwrap();
    let root = dir.path().join("ws").join("project");
    let src = fixture_source(name);
    copy_tree(&src, &root);
    if src.join("package.json").exists() {
        let modules = src.join("node_modules");
        assert!(
            modules.is_dir(),
            "{} is missing: run scripts/install-test-deps",
            modules.display()
        );
        std::os::unix::fs::symlink(&modules, root.join("node_modules")).unwrap();
    }
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "outside the project\n").unwrap();
    Project {
        root,
        outside,
        _dir: dir,
    }
}

/// A private copy of a test-tier fixture (`tests/fixtures/tiers-*`) as it is.
pub fn tier_fixture(name: &str) -> Project {
    copy_fixture(name)
}

/// The fixture's `pkg/strings.py`, bug-free.
pub const STRINGS_PY: &str = "def shout(text):\n    return text.upper() + \"!\"\n\n\ndef whisper(text):\n    return text.lower()\n";
/// The shout bug: `?` instead of `!`.
pub const SHOUT_BUG: &str = "    return text.upper() + \"?\"\n";
pub const SHOUT_OK: &str = "    return text.upper() + \"!\"\n";
/// The whisper bug: upper instead of lower.
pub const WHISPER_BUG: &str = "    return text.upper()\n";
pub const WHISPER_OK: &str = "    return text.lower()\n";

/// The pytest fixture: 5 passing calc tests, `tests/test_strings.py` (shout, whisper), and
/// the bugs asked for in `pkg/strings.py`.
pub fn pytest_project(shout_bug: bool, whisper_bug: bool) -> Project {
    require_tool("python3");
    let p = copy_fixture("pytest");
    std::fs::remove_file(p.root.join("tests/test_broken.py")).unwrap();
    p.write(
        "tests/test_calc.py",
        "import pytest\n\nfrom pkg.calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n\n\n\
@pytest.mark.parametrize(\"a,b,expected\", [(1, 1, 2), (2, 2, 4), (2, 3, 5)])\n\
def test_add_table(a, b, expected):\n    assert add(a, b) == expected\n\n\n\
class TestOuter:\n    class TestInner:\n        def test_works_when_nested(self):\n            assert add(2, 2) == 4\n",
    );
    assert_eq!(p.read("pkg/strings.py"), STRINGS_PY, "the fixture changed");
    let mut text = STRINGS_PY.to_string();
    if shout_bug {
        text = text.replace(SHOUT_OK, SHOUT_BUG);
    }
    if whisper_bug {
        text = text.replace("    return text.lower()\n", "    return text.upper()\n");
    }
    p.write("pkg/strings.py", &text);
    p
}

/// The fixture's `src/strings.js` lines, and their bugs.
pub const JS_SHOUT_OK: &str = "return `${text.toUpperCase()}!`;";
pub const JS_SHOUT_BUG: &str = "return `${text.toUpperCase()}?`;";
pub const JS_WHISPER_OK: &str = "return text.toLowerCase();";
pub const JS_WHISPER_BUG: &str = "return text.toUpperCase();";

/// The jest fixture: 4 passing math tests, `src/strings.test.js` (shout, whisper), and both
/// bugs in `src/strings.js`.
pub fn jest_project() -> Project {
    require_tool("node");
    let p = copy_fixture("jest");
    std::fs::remove_file(p.root.join("src/broken.test.js")).unwrap();
    p.write(
        "src/math.test.js",
        "const { add, multiply } = require(\"./math\");\n\ntest(\"adds two numbers\", () => {\n  expect(add(1, 2)).toBe(3);\n});\n\n\
test.each([\n  [1, 1, 2],\n  [2, 2, 4],\n])(\"add(%i, %i) = %i\", (a, b, expected) => {\n  expect(add(a, b)).toBe(expected);\n});\n\n\
test(\"multiplies\", () => {\n  expect(multiply(2, 3)).toBe(6);\n});\n",
    );
    let original = p.read("src/strings.js");
    assert!(
        original.contains(JS_SHOUT_OK) && original.contains(JS_WHISPER_OK),
        "the fixture changed"
    );
    p.write(
        "src/strings.js",
        &original
            .replace(JS_SHOUT_OK, JS_SHOUT_BUG)
            .replace(JS_WHISPER_OK, JS_WHISPER_BUG),
    );
    p
}

/// `shout.go`'s return line, and its bug.
pub const GO_SHOUT_OK: &str = "return strings.ToUpper(text) + \"!\"";
pub const GO_SHOUT_BUG: &str = "return strings.ToUpper(text) + \"?\"";

/// A go module with `Shout` (bug in) and `Whisper`, three tests: `TestShout` fails.
pub fn go_project() -> Project {
    require_tool("go");
    let dir = tempfile::Builder::new()
        .prefix("huddle-fix-go-")
        .tempdir()
        .unwrap();
    let root = dir.path().join("ws").join("project");
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "outside the project\n").unwrap();
    let p = Project {
        root,
        outside,
        _dir: dir,
    };
    p.write("go.mod", "module example.com/shout\n\ngo 1.19\n");
    p.write(
        "shout.go",
        &format!(
            "package shout\n\nimport \"strings\"\n\n// Shout upper-cases text and adds a bang.\nfunc Shout(text string) string {{\n\t{GO_SHOUT_BUG}\n}}\n\n\
// Whisper lower-cases text.\nfunc Whisper(text string) string {{\n\treturn strings.ToLower(text)\n}}\n"
        ),
    );
    p.write(
        "shout_test.go",
        "package shout\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n\tif got := Shout(\"hi\"); got != \"HI!\" {\n\t\tt.Fatalf(\"Shout(hi) = %q, want HI!\", got)\n\t}\n}\n\n\
func TestWhisper(t *testing.T) {\n\tif got := Whisper(\"HI\"); got != \"hi\" {\n\t\tt.Fatalf(\"Whisper(HI) = %q\", got)\n\t}\n}\n\n\
func TestWhisperEmpty(t *testing.T) {\n\tif Whisper(\"\") != \"\" {\n\t\tt.Fatal(\"not empty\")\n\t}\n}\n",
    );
    p
}
