// A JSON-RPC server of the careless kind many real MCP and LSP servers are:
// it logs to stdout between its replies ("[info] handled request N"), and it
// treats every line it reads as a request, crashing (exit 1) on anything
// else, such as an error response sent back for one of its log lines.
// Newline-delimited JSON on stdin/stdout; method "subtract" with [a, b].
"use strict";
const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (line.trim() === "") return;
  const msg = JSON.parse(line);  // throws on junk: the process dies
  if (typeof msg.method !== "string") {
    process.stderr.write("not a request: " + line + "\n");
    process.exit(1);
  }
  if (msg.id === undefined) return;
  const [a, b] = msg.params;
  process.stdout.write("[info] handled request " + msg.id + "\n");
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", result: a - b, id: msg.id }) + "\n");
});
rl.on("close", () => process.exit(0));
