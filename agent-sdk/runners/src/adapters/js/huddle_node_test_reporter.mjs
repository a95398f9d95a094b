// huddle's reporter for node's built-in test runner (`node --test --test-reporter=<this>`):
// appends one JSON line per event huddle reads to $HUDDLE_NODE_TEST_REPORT, written at once,
// so a run stopped at its timeout keeps what finished and names what was running. It yields
// nothing: node's spec reporter, beside it, prints the human output.
import fs from "node:fs";

const KEPT = new Set(["test:start", "test:pass", "test:fail", "test:stderr", "test:stdout"]);

export default async function* huddleReporter(source) {
  const file = process.env.HUDDLE_NODE_TEST_REPORT;
  const fd = file ? fs.openSync(file, "a") : null;
  for await (const event of source) {
    if (fd === null || !KEPT.has(event.type)) continue;
    const d = event.data ?? {};
    const line = { event: event.type, file: d.file ?? null, name: d.name, nesting: d.nesting ?? 0 };
    if (event.type === "test:pass" || event.type === "test:fail") {
      line.suite = d.details?.type === "suite";
      line.skip = d.skip !== undefined && d.skip !== false;
      line.todo = d.todo !== undefined && d.todo !== false;
      line.duration = d.details?.duration_ms ?? 0;
      line.line = d.line ?? null;
      const error = d.details?.error;
      if (error) {
        const cause = error.cause;
        line.error = String(cause?.stack ?? cause?.message ?? error.stack ?? error.message ?? error);
      }
    } else if (event.type === "test:stderr" || event.type === "test:stdout") {
      line.message = d.message;
    }
    fs.writeSync(fd, `${JSON.stringify(line)}\n`);
  }
}
