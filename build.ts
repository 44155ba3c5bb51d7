/**
 * The one build of dl: `buildDl` compiles src/main.ts into a self-contained executable
 * for one target. `bun build.ts` (npm run build) builds dist/dl for the host;
 * scripts/release.ts calls the same function for every release target, so a release
 * binary and a developer's binary cannot be built differently. The version, git commit
 * and target are baked in; the binary is told not to read a user's bunfig.toml, .env,
 * tsconfig or package.json at run time, because dl's behaviour must depend only on its
 * own code and DELEGATE_* variables.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "./package.json" with { type: "json" };

/** Release name (as in the archive names and `dl --version`) → Bun's compile target. */
export const TARGETS = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "linux-x64-musl": "bun-linux-x64-musl",
  "linux-arm64-musl": "bun-linux-arm64-musl",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
} as const satisfies Record<string, Bun.Build.CompileTarget>;
export type TargetName = keyof typeof TARGETS;

/** The glibc or macOS target of the machine running the build (what `npm run build` makes). */
export function hostTarget(): TargetName {
  const host = `${process.platform}-${process.arch}`;
  if (host in TARGETS) return host as TargetName;
  throw new Error(`build.ts: unsupported host ${host}; dl builds for ${Object.keys(TARGETS).join(", ")}`);
}

/**
 * The commit the binary is built from, with `-dirty` when tracked files differ from it,
 * so a binary built from uncommitted changes never claims to be that commit. A build
 * outside a git checkout (a source tarball) says "unknown".
 */
export function gitCommit(): string {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: import.meta.dir, stderr: "ignore" });
  // A copy of the tree inside some other repository must not take that repository's commit.
  const top = git("rev-parse", "--show-toplevel");
  if (top.exitCode !== 0 || realpathSync(top.stdout.toString().trim()) !== realpathSync(import.meta.dir))
    return "unknown";
  const head = git("rev-parse", "--short=12", "HEAD");
  if (head.exitCode !== 0) return "unknown";
  const clean = git("diff", "--quiet", "HEAD", "--");
  return `${head.stdout.toString().trim()}${clean.exitCode === 0 ? "" : "-dirty"}`;
}

/** What `dl --version` reports; the same for every target of one release. */
export type BuildInfo = { version: string; commit: string };

export function buildInfo(): BuildInfo {
  return { version: pkg.version, commit: gitCommit() };
}

/** JavaScriptCore's tier-up thresholds, as a multiple of the default (see buildDl). */
const JIT_POLICY = 64;

/** Compile dl for one target into `outfile`; throws with Bun's messages when the build fails. */
export async function buildDl(target: TargetName, outfile: string, info: BuildInfo = buildInfo()): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "src", "main.ts")],
    minify: true,
    sourcemap: "none",
    bytecode: true,
    format: "esm",
    // Each lazily imported part (a command, the agent loop, a job service) is its own chunk
    // inside the binary, read only when imported: dl serve maps and keeps less of it
    // (bench/startup: ~1.5 MB less resident, and initialize a few ms sooner).
    splitting: true,
    define: {
      DL_VERSION: JSON.stringify(info.version),
      DL_COMMIT: JSON.stringify(info.commit),
      DL_TARGET: JSON.stringify(target),
    },
    compile: {
      target: TARGETS[target],
      // Most dl processes are short (a CLI command, a supervisor that mostly waits on its
      // child) or run their start-up code once (dl serve). Tier-up thresholds 64 times
      // the default keep that run-once code in the interpreter instead of spending CPU on
      // JIT compiles it never repays; code that stays hot (SSE parsing, redaction of a big
      // output) still tiers up. bench/serve-cpu: a serve session 0.73x, --version 0.80-0.89x;
      // bench/sse and bench/redact unchanged.
      jitPolicy: JIT_POLICY,
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
  if (!result.success) throw new AggregateError(result.logs, `build.ts: building dl for ${target} failed`);
}

if (import.meta.main) {
  const started = performance.now();
  try {
    const target = hostTarget();
    const info = buildInfo();
    await buildDl(target, join(import.meta.dir, "dist", "dl"), info);
    const ms = Math.round(performance.now() - started);
    console.error(`built dist/dl ${info.version} (${info.commit}) for ${target} in ${ms} ms`);
  } catch (e) {
    for (const log of e instanceof AggregateError ? e.errors : []) console.error(log);
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(e instanceof AggregateError ? 1 : 2);
  }
}
