import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { hostGitCommands, hostTools } from "./attack-host.ts";
import { LAYOUTS, type LayoutId } from "./attack-layouts.ts";
import { prelude, ROUTES } from "./attack-routes.ts";
import { buildLayouts } from "./attack-suite.ts";

/**
 * The attack suite's control: each route marked `reaches` planted on the host itself,
 * alone, with no delegate and no guard, then the host's ordinary git commands and what
 * Claude Code and VS Code run on their own: each must leave its marker. So a marker
 * missing after a delegate's job (jail-routes-*.test.ts) means dl stopped it, not that the
 * host never ran it. (The other routes plant what a host obeys without these steps running
 * it: an agent definition, a memory file, another agent's or editor's configuration.)
 */

let id: Identity;
const ran = new Set<string>();

/** Each layout built once; a route gets a copy (a linked worktree's admin files hold absolute paths: built anew). */
function freshLayout(layout: LayoutId, root: string): void {
  const template = join(id.base, `template-${layout}`);
  if (layout === "worktree") {
    buildLayouts({ id, root }, layout);
    return;
  }
  if (!existsSync(template)) {
    mkdirSync(template);
    id.own(template);
    buildLayouts({ id, root: template }, layout);
  }
  const r = id.run(["cp", "-a", `${template}/.`, root]);
  if (r.code !== 0) throw new Error(`copy of layout ${layout}: ${r.stderr}`);
}

/** One route alone in a fresh copy of its layout (routes of one layout would undo each other unguarded). */
function plantAlone(r: (typeof ROUTES)[number], n: number): void {
  const root = join(id.base, `proj-${n}`);
  const markers = join(id.base, `markers-${n}`);
  mkdirSync(root);
  mkdirSync(markers);
  id.own(id.base);
  freshLayout(r.layout, root);
  id.run(["sh", "-c", `${prelude(markers)}\n${r.sh}\n`], { cwd: join(root, LAYOUTS[r.layout].workdir) });
  hostGitCommands(id, root, r.layout, [r]);
  // Claude Code's hooks, .mcp.json servers, VS Code's tasks (npm and node start slowly): for the routes of their classes.
  if (r.klass === "tool-config" || r.klass === "hook-manager") hostTools(id, root, r.layout);
  if (readdirSync(markers).includes(r.id)) ran.add(r.id);
}

beforeAll(() => {
  id = makeIdentity(identityNames()[0]!, "atk-control");
  for (const [n, r] of ROUTES.entries()) if (r.reaches) plantAlone(r, n);
}, 240_000);
afterAll(() => id?.cleanup());

test("unguarded, the host runs what each route plants", () => {
  const missing = ROUTES.filter((r) => r.reaches && !ran.has(r.id)).map((r) => r.id);
  const reaching = ROUTES.filter((r) => r.reaches).length;
  console.log(
    `control: unguarded, ${ran.size} of the ${reaching} routes marked reaches (of ${ROUTES.length}) ran on the host`,
  );
  expect(missing).toEqual([]);
});
