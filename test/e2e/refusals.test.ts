import { describe, expect, test } from "bun:test";
import type { ArgDef } from "citty";
import { argsOf } from "../../src/cli/command.ts";
import { COMMANDS } from "../../src/cli/main.ts";
import { runDl, tempDir } from "../helpers/dl.ts";

/**
 * Every refusal of dist/dl names what to run next. The bad lines are made from each
 * command's own flags and positionals (an unknown flag, a flag without its value, an enum
 * flag with a value it does not take, a missing positional), plus the refusals a command
 * makes of a value it parsed (a bad duration, a workdir it will not touch, a URL off this
 * machine …). Each is exit 2 and one line on stderr that starts with the command and holds
 * a next step: a command to run, an example, or what to pass, set or create.
 */
const NEXT = /\b(run |e\.g\.|dl [a-z]+|pass |create |set |start |install |cd |remove |chmod )/i;

type Line = { argv: string[]; why: string };

const loaded = await Promise.all(Object.entries(COMMANDS).map(async ([name, load]) => [name, await load()] as const));

/** Bad lines made from each command's own definition. */
function fromDefinitions(): Line[] {
  return loaded.flatMap(([name, cmd]) => {
    const args = Object.entries(argsOf(cmd)) as [string, ArgDef][];
    const positionals = args.filter(([, d]) => d.type === "positional" && d.required !== false);
    const filler = positionals.map(() => "x");
    const lines: Line[] = [{ argv: [name, ...filler, "--no-such-flag"], why: "an unknown flag" }];
    for (const [flag, d] of args) {
      if (d.type === "string") lines.push({ argv: [name, ...filler, `--${flag}`], why: `--${flag} without its value` });
      if (d.type === "enum") lines.push({ argv: [name, ...filler, `--${flag}`, "zzz"], why: `--${flag} zzz` });
    }
    if (positionals.length) lines.push({ argv: [name], why: "no positional" });
    return lines;
  });
}

const parsed: Line[] = [
  { argv: ["usage", "--since", "yesterday"], why: "a duration it cannot read" },
  { argv: ["wait", "--all", "--timeout", "-1"], why: "a negative timeout" },
  { argv: ["show", "cx-zz"], why: "an id of no known shape" },
  { argv: ["logs", "cx-0000000000"], why: "an id no store holds" },
  { argv: ["cancel", "nope"], why: "a cancel of no job id" },
  { argv: ["cancel", "cx-0000000000"], why: "a cancel of a job no store holds" },
  { argv: ["run", "nope", "hi"], why: "an agent that does not exist" },
  { argv: ["run", "helper", "hi", "--workdir", "/nonexistent-dl-dir"], why: "a workdir that does not exist" },
  { argv: ["run", "helper", "hi", "--workdir", "/"], why: "the root as workdir" },
  { argv: ["run", "helper", "hi", "--continue-from", "cv-00000000000000000000"], why: "a conversation that is gone" },
  { argv: ["run", "helper", "hi", "--continue-from", "nope"], why: "a conversation id of no known shape" },
  { argv: ["status", "--watch", "--json"], why: "two flags that do not combine" },
  { argv: ["init", "--probe", "http://example.com"], why: "a URL off this machine" },
  { argv: ["init", "--key", "a b"], why: "a key of two words" },
  { argv: ["init", "--cache-dir", "relative"], why: "a relative cache dir" },
  { argv: ["version"], why: "a command that is a flag" },
  { argv: ["-x"], why: "an unknown top-level flag" },
];

describe("every refusal names what to run next", () => {
  const home = tempDir("refusals-home");
  const agents = tempDir("refusals-agents");
  const env = { HOME: home, XDG_CACHE_HOME: undefined, XDG_CONFIG_HOME: undefined, DELEGATE_LOCAL_AGENTS_DIR: agents };
  const lines = [...fromDefinitions(), ...parsed];

  test(`${lines.length} bad command lines: exit 2, one line, the command, a next step`, async () => {
    await Bun.write(`${agents}/helper.md`, "---\nname: helper\n---\nHelp.\n");
    const ran = await Promise.all(lines.map(async (l) => ({ l, r: await runDl(l.argv, env) })));
    for (const { l, r } of ran) {
      const said = r.stderr.trimEnd();
      const shown = { line: `dl ${l.argv.join(" ")} (${l.why})`, code: r.code, said };
      expect({ ...shown, code: r.code }).toMatchObject({ code: 2 });
      expect({ ...shown, lines: said.split("\n").length }).toMatchObject({ lines: 1 });
      expect(said).toMatch(/^dl( [a-z]+)?: /);
      // The step is in what follows the command's own name.
      expect({ ...shown, next: NEXT.test(said.replace(/^dl( [a-z]+)?: /, "")) }).toMatchObject({ next: true });
    }
  }, 120_000);
});
