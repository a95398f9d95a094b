// huddle's mocha reporter: mocha's own json reporter (loaded from the project's mocha, named by
// $HUDDLE_MOCHA_JSON_REPORTER), plus one JSON line appended to $HUDDLE_MOCHA_PROGRESS when a
// test starts and one when it ends, written at once (not buffered), so a run stopped at its
// timeout still has the tests that finished and names the one still running. mocha takes one
// reporter only, hence the subclass.
const fs = require("fs");
const JSONReporter = require(process.env.HUDDLE_MOCHA_JSON_REPORTER);

function message(err) {
  if (!err) return undefined;
  return { stack: err.stack, message: err.message };
}

class HuddleMochaReporter extends JSONReporter {
  constructor(runner, options) {
    super(runner, options);
    const file = process.env.HUDDLE_MOCHA_PROGRESS;
    const fd = file ? fs.openSync(file, "a") : null;
    const write = (event, test, extra) => {
      if (fd === null) return;
      const line = {
        event,
        title: test.title,
        fullTitle: test.fullTitle(),
        file: test.file,
        hook: test.type === "hook",
        ...extra,
      };
      fs.writeSync(fd, `${JSON.stringify(line)}\n`);
    };
    runner.on("test", (test) => write("start", test, {}));
    runner.on("pass", (test) => write("passed", test, { duration: test.duration }));
    runner.on("pending", (test) => write("pending", test, {}));
    runner.on("fail", (test, err) =>
      write("failed", test, { duration: test.duration, err: message(err) }),
    );
  }
}

module.exports = HuddleMochaReporter;
