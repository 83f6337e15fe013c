// A tiny data-loader whose failures Node.js itself prints: `node worker.js SCENARIO`.
// Each scenario writes exactly one event to stderr, printed by Node's own code (the uncaught
// exception handler in src/node_errors.cc, lib/internal/process/promises.js, util.inspect through
// console.error), never by hand.
"use strict";

function loadShard(i) {
  const shards = {};
  return shards[i].rows;
}

async function fetchShard(i) {
  throw new Error(`shard ${i} unreachable: connect ECONNREFUSED 10.0.0.7:9000`);
}

function loadConfig() {
  try {
    JSON.parse("{bad");
  } catch (e) {
    throw new Error("config load failed", { cause: e });
  }
}

const scenarios = {
  // the source line and a caret under the throw, a blank line, the stack, then "Node.js v20..."
  uncaught: () => loadShard(3),
  // a message over lines: util.inspect prints error.stack as it is
  uncaught_multiline: () => { throw new RangeError("batch size 48 does not divide\n  world size 5"); },
  // an unhandled rejection: the same report, from the promise's stack
  rejection: () => { fetchShard(7); },
  // console.error(err) with a cause: "{ [cause]: ... }" nested, indented by util.inspect
  cause: () => { try { loadConfig(); } catch (e) { console.error(e); } },
  // AggregateError: its errors nested as "[errors]: [ ... ]"
  aggregate: () => {
    try {
      throw new AggregateError([new Error("rank 1 timed out"), new TypeError("bad dtype")], "2 ranks failed");
    } catch (e) { console.error(e); }
  },
  // an error with own properties (a system error): "{ errno: ..., code: ... }" after the stack
  syscall: () => { try { require("fs").readFileSync("/nonexistent/shard-0.arrow"); } catch (e) { console.error(e); } },
};

scenarios[process.argv[2]]();
