// huddle's vitest progress reporter: appends one JSON line to $HUDDLE_VITEST_PROGRESS as each
// test ends (vitest 3's onTestCaseResult), written at once, so `huddle test` can count tests
// while the run goes. vitest's json reporter stays the source of the report; older vitest
// versions never call the hook and the file stays empty.
import fs from "node:fs";

export default class HuddleVitestProgress {
  constructor() {
    const file = process.env.HUDDLE_VITEST_PROGRESS;
    this.fd = file ? fs.openSync(file, "a") : null;
  }

  onTestCaseResult(testCase) {
    if (this.fd === null) return;
    const state = testCase.result()?.state ?? "pending";
    fs.writeSync(this.fd, `${JSON.stringify({ event: "result", status: state })}\n`);
  }
}
