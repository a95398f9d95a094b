// huddle's jest progress reporter: appends one JSON line when a test starts and one when it
// ends to $HUDDLE_JEST_PROGRESS, written at once (not buffered), so a run stopped at its
// timeout still has the tests that finished, and names the ones still running; and one line
// per file result, with its project, to $HUDDLE_JEST_FILES (small, read on every run). jest's
// own --json report stays the source of a run that completes.
const fs = require("fs");

// A test file's project: its config's displayName (a string or `{ name, color }`).
function projectOf(test) {
  const name = test.context?.config?.displayName;
  return typeof name === "string" ? name : (name?.name ?? null);
}

class HuddleProgress {
  constructor() {
    const file = process.env.HUDDLE_JEST_PROGRESS;
    this.fd = file ? fs.openSync(file, "a") : null;
    const files = process.env.HUDDLE_JEST_FILES;
    this.filesFd = files ? fs.openSync(files, "a") : null;
    // Test file path → the projects running it now.
    this.running = new Map();
  }

  write(event, test, info) {
    if (this.fd === null) return;
    const line = {
      event,
      file: test.path,
      project: this.projectRunning(test.path),
      ancestorTitles: info.ancestorTitles,
      title: info.title,
    };
    if (event === "result") {
      line.status = info.status;
      line.duration = info.duration;
      line.failureMessages = info.failureMessages;
      line.location = info.location;
    }
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  // The Test that jest hands to the test case events carries the first project's config
  // whatever project runs the file, so a case's project comes from the file runs started
  // and not yet ended: the one project running that path, or none when two are.
  onTestFileStart(test) {
    const list = this.running.get(test.path) ?? [];
    list.push(projectOf(test));
    this.running.set(test.path, list);
  }

  onTestStart(test) {
    this.onTestFileStart(test);
  }

  projectRunning(path) {
    const list = this.running.get(path) ?? [];
    return list.length === 1 ? list[0] : null;
  }

  onTestCaseStart(test, info) {
    this.write("start", test, info);
  }

  onTestCaseResult(test, result) {
    this.write("result", test, result);
  }

  // Each file's result, in the order of the --json report's testResults, with its project
  // (jest --json names none); a file that failed to load has no test case of its own.
  onTestResult(test, result) {
    const project = projectOf(test);
    const list = this.running.get(test.path) ?? [];
    const at = list.indexOf(project);
    if (at >= 0) list.splice(at, 1);
    if (this.fd === null) return;
    if (this.filesFd !== null) {
      fs.writeSync(this.filesFd, `${JSON.stringify({ event: "file", file: test.path, project })}\n`);
    }
    if (!result.testExecError) return;
    const line = {
      event: "file-error",
      file: test.path,
      project,
      message: result.failureMessage || "",
    };
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  getLastError() {
    return undefined;
  }
}

module.exports = HuddleProgress;
