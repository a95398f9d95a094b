// huddle's MCP server through the official TypeScript SDK 1.x, as an agent on it would use it:
// tools listed with their output schemas, answers validated against them by the SDK, and
// refusals read as the API's error (code and message), not as a schema mismatch. Prints one
// JSON report on stdout for tests/tests/mcp/ts_sdk.rs; any surprise throws (non-zero exit).
//
// Environment: HUDDLE_MCP_URL, HUDDLE_TESTER and HUDDLE_OTHER (two testers' tokens).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

async function connect(token) {
  const client = new Client({ name: "huddle-ts-sdk-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(process.env.HUDDLE_MCP_URL), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** A call as an agent makes it: the SDK's result, or what the SDK threw. */
async function call(client, name, args) {
  try {
    const result = await client.callTool({ name, arguments: args });
    return { isError: result.isError === true, structured: result.structuredContent ?? null, text: result.content?.[0]?.text ?? null };
  } catch (e) {
    return { threw: `${e.code ?? ""} ${e.message}` };
  }
}

const tester = await connect(process.env.HUDDLE_TESTER);
const other = await connect(process.env.HUDDLE_OTHER);
const report = {};
const { tools } = await tester.listTools();
report.toolsWithOutputSchema = tools.filter((t) => t.outputSchema).length;
report.tools = tools.length;
report.whoami = await call(tester, "whoami", {});
report.claimed = await call(tester, "task_claim", {});
// Refusals: a task another agent holds, a question while none may be asked, bad input.
report.notHolder = await call(other, "task_complete", { id: "TEST-001" });
report.askNotHolder = await call(other, "task_ask", { id: "TEST-001", question: "Mine?" });
report.invalid = await call(tester, "task_heartbeat", { id: "TEST-001", leaseMs: 1 });
report.missing = await call(tester, "task_get", { id: "TEST-404" });
report.asked = await call(tester, "task_ask", { id: "TEST-001", question: "Drop the legacy table?" });
report.decision = await call(tester, "task_decision", { id: report.asked.structured?.question?.id ?? "HUMAN-001" });
report.completed = await call(tester, "task_complete", { id: "TEST-001" });
await tester.close();
await other.close();
process.stdout.write(JSON.stringify(report));
