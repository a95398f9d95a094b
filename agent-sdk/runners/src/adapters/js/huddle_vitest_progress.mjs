// huddle's vitest progress reporter (vitest 3's reporter API), beside vitest's json reporter:
// appends one JSON line when a test starts and one when it ends to $HUDDLE_JEST_PROGRESS,
// written at once (not buffered), so a run stopped at its timeout still has the tests that
// finished and names the ones still running; and, at the end, one line per file result with
// its project to $HUDDLE_JEST_FILES, in the order of the json reporter's testResults (vitest's
// json report names no project). The lines are the jest progress reporter's, read by the same
// code. Older vitest calls none of these hooks: its runs keep only the json report.
import fs from "node:fs";

function open(name) {
  const file = process.env[name];
  return file ? fs.openSync(file, "a") : null;
}

function ancestors(testCase) {
  const titles = [];
  for (let p = testCase.parent; p && p.type === "suite"; p = p.parent) titles.unshift(p.name);
  return titles;
}

function projectName(project) {
  const name = project?.name;
  return typeof name === "string" && name !== "" ? name : null;
}

export default class HuddleVitestProgress {
  constructor() {
    this.fd = open("HUDDLE_JEST_PROGRESS");
    this.filesFd = open("HUDDLE_JEST_FILES");
  }

  write(fd, line) {
    if (fd !== null) fs.writeSync(fd, `${JSON.stringify(line)}\n`);
  }

  line(event, testCase) {
    return {
      event,
      file: testCase.module.moduleId,
      project: projectName(testCase.project),
      ancestorTitles: ancestors(testCase),
      title: testCase.name,
    };
  }

  onTestCaseReady(testCase) {
    this.write(this.fd, this.line("start", testCase));
  }

  onTestCaseResult(testCase) {
    const result = testCase.result();
    const line = this.line("result", testCase);
    line.status = result.state;
    line.duration = testCase.diagnostic()?.duration;
    line.failureMessages = (result.errors ?? []).map((e) => e.stack || e.message || String(e));
    line.location = testCase.location;
    this.write(this.fd, line);
  }

  // A file that failed to load has no test case of its own.
  onTestModuleEnd(testModule) {
    const errors = testModule.errors();
    if (errors.length === 0 || testModule.children.size > 0) return;
    this.write(this.fd, {
      event: "file-error",
      file: testModule.moduleId,
      project: projectName(testModule.project),
      message: errors.map((e) => e.stack || e.message || String(e)).join("\n"),
    });
  }

  onFinished(files = []) {
    for (const f of files) {
      const project = typeof f.projectName === "string" && f.projectName !== "" ? f.projectName : null;
      this.write(this.filesFd, { event: "file", file: f.filepath, project });
    }
  }
}
