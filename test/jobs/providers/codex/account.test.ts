import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CodexAccount } from "../../../../src/jobs/providers/codex/account.ts";
import { tryLock } from "../../../../src/sys/flock.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { until } from "../../helpers.ts";

/** A fresh folder inside the suite's isolated root. */
const fresh = (name: string) => tempDir(name);

describe("the shared account file fails closed", () => {
  test("a corrupt shared.json means a short cooldown, then a sane file; it clears after 30 s", () => {
    for (const junk of ['{"cooldown_until": 99', "null", "[1,2]", "\u0000\u0001garbage"]) {
      const dir = fresh("corrupt");
      let now = 5_000_000;
      // It was written by a server that recorded a throttle and an auth failure; then the
      // disk mangled it. Reading it as "all clear" would drop both.
      writeFileSync(join(dir, "shared.json"), junk);
      const a = new CodexAccount({ stateDir: dir, codexHome: fresh("home"), now: () => now });
      expect(a.gate()).toBe("throttle_cooldown");
      const v = a.view(4, 2);
      expect(v).toMatchObject({ state: "cooldown", retry_in_s: 30 });
      expect(v.cooldown_reason).toContain("unreadable");
      // Rewritten sane, so every other server reads the same cooldown.
      const disk = JSON.parse(readFileSync(join(dir, "shared.json"), "utf8"));
      expect(disk).toMatchObject({ v: 1, cooldown_until: now + 30_000 });
      const b = new CodexAccount({ stateDir: dir, codexHome: fresh("home"), now: () => now });
      expect(b.gate()).toBe("throttle_cooldown");
      now += 30_001;
      expect(a.gate()).toBeNull();
      expect(b.gate()).toBeNull();
    }
  });

  test("a missing file is all clear (nothing was ever recorded)", () => {
    const a = new CodexAccount({ stateDir: fresh("missing"), codexHome: fresh("home") });
    expect(a.gate()).toBeNull();
    expect(existsSync(a.file)).toBe(false);
  });

  test("a busy lock neither blocks the caller nor writes without it; the update lands once it is free", async () => {
    const dir = fresh("busy");
    const a = new CodexAccount({ stateDir: dir, codexHome: fresh("home"), random: () => 0.5, backoffS: [5] });
    const held = tryLock(join(dir, "shared.lock"))!;
    expect(held).not.toBeNull();
    const t0 = performance.now();
    const delay = a.recordThrottle(1, null);
    const took = performance.now() - t0;
    console.log(`recordThrottle under a busy lock returned in ${took.toFixed(1)} ms`);
    expect(took).toBeLessThan(100);
    expect(delay).toBe(5000);
    expect(existsSync(a.file)).toBe(false); // nothing written behind the holder's back
    held.release();
    const s = await until(
      () => (existsSync(a.file) ? JSON.parse(readFileSync(a.file, "utf8")) : null),
      "the deferred update to land",
      30_000,
    );
    expect(s.throttles).toHaveLength(1);
    expect(s.cooldown_until).toBeGreaterThan(Date.now());
    expect(a.gate()).toBe("throttle_cooldown");
  });
});
