/**
 * One evaluation of a client's own mapping: JSONata on the request thread (as before the sandbox) against a round trip
 * to the worker pool (MappingEvaluator), plus a worker's cold start. Run: `npx tsx bench/mapping-evaluator.ts`.
 */
import { performance } from "node:perf_hooks";
import jsonata from "jsonata";
import { MappingEvaluator } from "../src/directory/mapping/evaluator.js";
const CUSTOM = '{"login": $lowercase(userName), "email": emails[0].value, "title": title}';
const user = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: "Alice@Example.com",
  emails: [{ value: "a@example.com", primary: true }],
  title: "x",
  name: { givenName: "A", familyName: "B" },
};
const e = jsonata(CUSTOM, { timeout: 1000, stack: 200, sequence: 100000 });
const N = 5000;
for (let i = 0; i < 500; i++) await e.evaluate(user);
let t = performance.now();
for (let i = 0; i < N; i++) JSON.parse(JSON.stringify(await e.evaluate(user)));
console.log("main thread", (((performance.now() - t) * 1000) / N).toFixed(1), "µs/evaluation");
const pool = new MappingEvaluator();
for (let i = 0; i < 500; i++) await pool.evaluate(CUSTOM, user);
t = performance.now();
for (let i = 0; i < N; i++) JSON.parse(((await pool.evaluate(CUSTOM, user)) as { json: string }).json);
console.log("worker, one at a time", (((performance.now() - t) * 1000) / N).toFixed(1), "µs/evaluation");
t = performance.now();
await Promise.all(Array.from({ length: 900 }, () => pool.evaluate(CUSTOM, user)));
console.log(
  "worker, 900 at once, one organization",
  (((performance.now() - t) * 1000) / 900).toFixed(1),
  "µs/evaluation",
);
t = performance.now();
await Promise.all(Array.from({ length: 900 }, (_, i) => pool.evaluate(CUSTOM, user, `org-${i % 10}`)));
console.log(
  "worker, 900 at once, 10 organizations",
  (((performance.now() - t) * 1000) / 900).toFixed(1),
  "µs/evaluation",
);
t = performance.now();
const w = new MappingEvaluator({ concurrency: 1 });
await w.evaluate(CUSTOM, user);
console.log("cold start of a worker", (performance.now() - t).toFixed(1), "ms");
await pool.close();
await w.close();
