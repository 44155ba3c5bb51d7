import { describe, expect, test } from "bun:test";
import { planAdmission } from "../../../src/jobs/engine/admission.ts";
import type { JobRow } from "../../../src/store/types.ts";

/** The pure FIFO plan: which queued rows may start now, and why the others wait. */
let seq = 0;
const row = (project: string, status: "queued" | "running", root = `${project}/wt${seq}`): JobRow =>
  ({
    id: `cx-${++seq}`,
    status,
    project,
    workspace_root: root,
    retry_at: null,
    server_id: "s1",
    owner_pid: 1,
    owner_start: "x",
  }) as unknown as JobRow;

const plan = (
  rows: JobRow[],
  caps: { global: number; configuredGlobal?: number; project: number; configuredProject?: number },
) =>
  planAdmission({
    rows,
    now: 0,
    globalCap: caps.global,
    configuredGlobalCap: caps.configuredGlobal ?? caps.global,
    perProjectCap: caps.project,
    configuredPerProjectCap: caps.configuredProject ?? caps.project,
    gate: null,
    ownerAlive: () => true,
  }).map((e) => e.reason);

describe("admission plan", () => {
  test("a full project waits for a slot; a halved project cap reads adaptive_cap", () => {
    const rows = [row("/a", "running"), row("/a", "running"), row("/a", "queued"), row("/b", "queued")];
    expect(plan(rows, { global: 8, project: 2 })).toEqual(["waiting_for_slot", null]);
    // Adaptive period: 6 per project halved to 3, global 8 halved to 4.
    const more = [
      row("/a", "running"),
      row("/a", "running"),
      row("/a", "running"),
      row("/a", "queued"),
      row("/b", "queued"),
    ];
    expect(plan(more, { global: 4, configuredGlobal: 8, project: 3, configuredProject: 6 })).toEqual([
      "adaptive_cap",
      null,
    ]);
  });

  test("FIFO: an older waiting job keeps its checkout from a younger one", () => {
    const rows = [row("/a", "running", "/a/main"), row("/a", "queued", "/a/main"), row("/a", "queued", "/a/main")];
    expect(plan(rows, { global: 8, project: 6 })).toEqual(["workspace_busy", "workspace_busy"]);
  });

  test("the global cap holds across projects and checkouts: the rest read global_cap", () => {
    const rows = [row("/a", "running"), row("/b", "queued"), row("/c", "queued"), row("/d", "queued")];
    expect(plan(rows, { global: 2, project: 2 })).toEqual([null, "global_cap", "global_cap"]);
  });
});
