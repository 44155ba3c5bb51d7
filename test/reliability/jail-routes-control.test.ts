import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { hostGitCommands, hostTools } from "./attack-host.ts";
import { LAYOUTS } from "./attack-layouts.ts";
import { prelude, ROUTES } from "./attack-routes.ts";
import { buildLayouts } from "./attack-suite.ts";

/**
 * The attack suite's control: every route planted on the host itself, with no delegate
 * and no guard, then the host's ordinary git commands and what Claude Code and VS Code
 * run on their own. The routes marked `reaches` must then leave their marker: so a
 * marker missing after a delegate's job (jail-routes-*.test.ts) means dl stopped it, not
 * that the host never ran it.
 */

let id: Identity;
const ran = new Set<string>();

/** One route alone in a fresh copy of its layout (routes of one layout would undo each other unguarded). */
function plantAlone(r: (typeof ROUTES)[number], n: number): void {
  const root = join(id.base, `proj-${n}`);
  const markers = join(id.base, `markers-${n}`);
  mkdirSync(root);
  mkdirSync(markers);
  id.own(id.base);
  buildLayouts({ id, root }, r.layout);
  id.run(["sh", "-c", `${prelude(markers)}\n${r.sh}\n`], { cwd: join(root, LAYOUTS[r.layout].workdir) });
  hostGitCommands(id, root, r.layout, [r]);
  // Claude Code's hooks, .mcp.json servers, VS Code's tasks (npm and node start slowly): for the routes of their classes.
  if (r.klass === "tool-config" || r.klass === "hook-manager") hostTools(id, root, r.layout);
  if (readdirSync(markers).includes(r.id)) ran.add(r.id);
}

beforeAll(() => {
  id = makeIdentity(identityNames()[0]!, "atk-control");
  for (const [n, r] of ROUTES.entries()) plantAlone(r, n);
}, 180_000);
afterAll(() => id?.cleanup());

test("unguarded, the host runs what each route plants", () => {
  const missing = ROUTES.filter((r) => r.reaches && !ran.has(r.id)).map((r) => r.id);
  console.log(
    `control: ${ran.size} of ${ROUTES.length} routes ran on the host unguarded: ${[...ran].sort().join(", ")}`,
  );
  expect(missing).toEqual([]);
});
