// huddle's jest progress reporter: appends one JSON line when a test starts and one when it
// ends to $HUDDLE_JEST_PROGRESS, written at once (not buffered), so a run stopped at its
// timeout still has the tests that finished, and names the ones still running. jest's own
// --json report stays the source of a run that completes.
const fs = require("fs");

class HuddleProgress {
  constructor() {
    const file = process.env.HUDDLE_JEST_PROGRESS;
    this.fd = file ? fs.openSync(file, "a") : null;
  }

  write(event, test, info) {
    if (this.fd === null) return;
    const line = {
      event,
      file: test.path,
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

  onTestCaseStart(test, info) {
    this.write("start", test, info);
  }

  onTestCaseResult(test, result) {
    this.write("result", test, result);
  }

  // A file that failed to load (or outside its tests) has no test case of its own.
  onTestResult(test, result) {
    if (this.fd === null || !result.testExecError) return;
    const line = { event: "file-error", file: test.path, message: result.failureMessage || "" };
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  getLastError() {
    return undefined;
  }
}

module.exports = HuddleProgress;
