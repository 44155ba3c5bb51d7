import { describe, expect, test } from "bun:test";
import { JobStore } from "../../src/store/jobs.ts";
import { tempDir } from "../helpers/dl.ts";
import { newJob } from "./helpers.ts";

/**
 * A job's supervisor takes it over from the server that queued it. The attack: two
 * supervisors started for one job (two servers reaping the same dead server's queue, or a
 * retried handoff) must not both run it, and a handoff that lost the race must not
 * rename the winner's job as its own.
 */
const queued = (id: string, server: string) => newJob(id, { server_id: server, owner_pid: 1, owner_start: "s" });

describe("a supervisor adopts its job", () => {
  test("only one supervisor adopts a job, and only while it is queued under the server that handed it over", () => {
    const store = JobStore.open(tempDir("adopt"));
    try {
      store.insertMany([queued("a", "srv-dead")]);
      expect(store.adopt("a", "srv-other", { server_id: "sup-0", owner_pid: 9, owner_start: "x" })).toBe(false);
      expect(store.adopt("a", "srv-dead", { server_id: "sup-1", owner_pid: 10, owner_start: "t1" })).toBe(true);
      expect(store.adopt("a", "srv-dead", { server_id: "sup-2", owner_pid: 11, owner_start: "t2" })).toBe(false);
      // The loser's server naming its supervisor as the owner changes nothing now.
      expect(store.setOwnerIfFrom("a", "srv-dead", { owner_pid: 11, owner_start: "t2" })).toBe(false);
      expect(store.get("a")).toMatchObject({ server_id: "sup-1", owner_pid: 10, owner_start: "t1" });
      store.update("a", { status: "running" }, ["queued"]);
      expect(store.adopt("a", "sup-1", { server_id: "sup-3", owner_pid: 12, owner_start: "t3" })).toBe(false);
    } finally {
      store.close();
    }
  });
});
