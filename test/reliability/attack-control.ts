import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CODEX_NPM_BIN } from "../helpers/codex-home.ts";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { hostGitCommands, hostTools } from "./attack-host.ts";
import { LAYOUTS, type LayoutId } from "./attack-layouts.ts";
import { prelude, ROUTES, type Route } from "./attack-routes.ts";
import { AGENTS_IN_TREE, buildLayouts, CODEX_HOME_IN_TREE, plantDlReads, XDG_IN_TREE } from "./attack-suite.ts";

/**
 * The attack suite's control, in slices (jail-routes-control-<k>.test.ts, one or two
 * layouts each: they run side by side under --parallel): each route marked `reaches`,
 * planted on the host itself with no delegate and no guard, then the host's ordinary git
 * commands and what Claude Code and VS Code run on their own: each must leave its marker.
 * So a marker missing after a delegate's job (jail-routes-*.test.ts) means dl stopped it,
 * not that the host never ran it. (The other routes plant what a host obeys without these
 * steps running it: an agent definition, a memory file, another agent's or editor's
 * configuration.)
 *
 * A layout's routes are planted together first, by the same script the guarded job runs,
 * and the host takes its steps once: that is the planting the guarded suite checks. The
 * routes whose markers are missing then (routes of one layout can undo each other
 * unguarded: one replaces the hook file another's payload hangs on) are planted together
 * again in a fresh copy, while that finds more, and the rest alone: each must leave its
 * marker in one of those plantings.
 */

/** The layouts each slice plants (the two big ones alone; slice 3 also runs dl's own reads). */
const SLICES: Record<number, LayoutId[]> = { 1: ["repo"], 2: ["many"], 3: ["worktree", "subdir"] };

/** The control over the reaching routes of slice `slice`'s layouts. */
export function controlSlice(slice: 1 | 2 | 3): void {
  let id: Identity;
  const ran = new Set<string>();
  const alone = new Set<string>();
  let firstRound = 0;
  const layouts = SLICES[slice]!;
  const mine = ROUTES.filter((r) => r.reaches && layouts.includes(r.layout));

  /** A fresh copy of a layout at `root`, from a template built once (a linked worktree's admin files hold absolute paths: built anew). */
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

  /** `routes` planted by one script in a fresh copy of `layout`, then the host's steps until every marker is there; the markers left. */
  function plant(layout: LayoutId, routes: Route[], tag: string, tools: (r: Route) => boolean): string[] {
    const root = join(id.base, `proj-${tag}`);
    const markers = join(id.base, `markers-${tag}`);
    mkdirSync(root);
    mkdirSync(markers);
    id.own(id.base);
    freshLayout(layout, root);
    const script = `${prelude(markers)}\n${routes.map((r) => r.sh).join("\n")}\n`;
    id.run(["sh", "-c", script], { cwd: join(root, LAYOUTS[layout].workdir) });
    const wanted = routes.filter((r) => r.reaches);
    const seen = () => wanted.every((r) => existsSync(join(markers, r.id)));
    // Claude Code's hooks, .mcp.json servers, VS Code's tasks first for a tool-config route
    // alone: the git commands before them (every step in every checkout) were most of its
    // time. The order cannot make a route pass that does not reach: a marker only appears
    // if some host step ran the payload.
    if (routes.some(tools)) hostTools(id, root, layout, seen);
    hostGitCommands(id, root, layout, routes, seen);
    hostTools(id, root, layout, seen);
    return readdirSync(markers);
  }

  /** The reaching routes of `layout` whose markers appear: with every route of the layout, then the missing ones together while that finds more. */
  function plantTogether(layout: LayoutId): void {
    // Every route of the layout, as the guarded job plants them (attack-suite.ts runJob).
    const first = plant(
      layout,
      ROUTES.filter((r) => r.layout === layout),
      layout,
      () => false,
    );
    for (const r of mine.filter((m) => m.layout === layout && first.includes(m.id))) ran.add(r.id);
    firstRound += mine.filter((m) => m.layout === layout && ran.has(m.id)).length;
    for (let round = 2; ; round++) {
      const left = mine.filter((r) => r.layout === layout && !ran.has(r.id));
      if (left.length < 2) return;
      const got = plant(layout, left, `${layout}-${round}`, () => false).filter((m) => left.some((r) => r.id === m));
      for (const m of got) ran.add(m);
      if (got.length === 0) return;
    }
  }

  beforeAll(() => {
    id = makeIdentity(identityNames()[0]!, `atk-control${slice}`);
    for (const layout of layouts) plantTogether(layout);
    for (const r of mine.filter((m) => !ran.has(m.id))) {
      alone.add(r.id);
      if (plant(r.layout, [r], r.id, (x) => x.klass === "tool-config").includes(r.id)) ran.add(r.id);
    }
  }, 400_000);
  afterAll(() => id?.cleanup());

  test(`unguarded, the host runs what each route plants (slice ${slice}: ${layouts.join(", ")})`, () => {
    const missing = mine.filter((r) => !ran.has(r.id)).map((r) => r.id);
    const reaching = ROUTES.filter((r) => r.reaches).length;
    console.log(
      `control ${slice}: unguarded, ${ran.size} of its ${mine.length} routes marked reaches ran on the host ` +
        `(${firstRound} with every route of their layout, ${mine.length - firstRound - alone.size} with the rest, ` +
        `${alone.size} alone: ${[...alone].join(", ")}; ` +
        `${reaching} of the ${ROUTES.length} routes reach)`,
    );
    expect(mine.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  if (slice !== 3) return;
  /** dl's own third tier of agent definitions, put in the tree by the settings: unguarded, the next delegation obeys what a job plants there. */
  test("unguarded, dl loads the agent definitions a job plants in a DELEGATE_LOCAL_AGENTS_DIR inside the workdir", async () => {
    const root = join(id.base, "proj-agents");
    const markers = join(id.base, "markers-agents");
    mkdirSync(root);
    mkdirSync(markers);
    freshLayout("repo", root);
    const agents = join(root, AGENTS_IN_TREE);
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(agents, "coder.md"), "---\nname: coder\ndescription: c\ntools: Read, Write, Edit\n---\nCode.\n");
    id.own(id.base);
    const route = ROUTES.find((r) => r.id === "dl-agents-dir")!;
    id.run(["sh", "-c", `${prelude(markers)}\n${route.sh}\n`], { cwd: join(root, LAYOUTS.repo.workdir) });
    const [command, ...args] = id.argv([id.dl, "serve"]);
    const env = id.env({
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9",
      DELEGATE_LOCAL_KEY: "k",
    });
    const client = new Client({ name: "control-agents", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: command!, args, env, cwd: id.base, stderr: "pipe" }));
    try {
      const r = (await client.callTool({ name: "list_local_agents", arguments: { workdir: join(root, "repo") } })) as {
        structuredContent?: { agents?: { name: string; tools?: string[] }[] };
      };
      const got = Object.fromEntries((r.structuredContent?.agents ?? []).map((a) => [a.name, a.tools ?? []]));
      expect({ coder: got.coder, planted: got.planted }).toEqual({ coder: ["run_bash"], planted: ["run_bash"] });
    } finally {
      await client.close();
    }
  }, 60_000);

  /** A route of dl's own reads planted alone in a fresh repo layout with its folders in the tree; the layout root. */
  function plantDlRead(routeId: string): string {
    const root = join(id.base, `proj-${routeId}`);
    const markers = join(id.base, `markers-${routeId}`);
    mkdirSync(root);
    mkdirSync(markers);
    freshLayout("repo", root);
    plantDlReads(root);
    id.own(id.base);
    const route = ROUTES.find((r) => r.id === routeId)!;
    const r = id.run(["sh", "-c", `${prelude(markers)}\n${route.sh}\n`], { cwd: join(root, LAYOUTS.repo.workdir) });
    if (r.code !== 0) throw new Error(`planting ${routeId}: ${r.stderr}`);
    return root;
  }

  /** The settings file and dsh models file an XDG_CONFIG_HOME in the tree places: unguarded, dl's next start obeys the job's. */
  test("unguarded, dl takes its settings from the settings file a job plants under an XDG_CONFIG_HOME inside the workdir", () => {
    const root = plantDlRead("dl-settings-file");
    const r = id.run([id.dl, "status", "--json"], { env: id.env({ XDG_CONFIG_HOME: join(root, XDG_IN_TREE) }) });
    expect(r.stdout).toContain('"model":"planted-by-job"');
  }, 60_000);

  /** CODEX_HOME in the tree: the real Codex CLI reads the config.toml a job planted (an MCP server it starts: sh <the job's script>). */
  test("unguarded, the real Codex CLI loads the config.toml a job plants in a CODEX_HOME inside the workdir", () => {
    const root = plantDlRead("dl-codex-home");
    const home = join(root, CODEX_HOME_IN_TREE);
    const r = id.run([CODEX_NPM_BIN, "mcp", "list"], { env: id.env({ CODEX_HOME: home }) });
    expect({ code: r.code, listed: r.stdout.match(/^planted\s+sh\s+(\S+)/m)?.[1] }).toEqual({
      code: 0,
      listed: join(root, "repo/.payloads/dl-codex-home.sh"),
    });
  }, 60_000);
}
