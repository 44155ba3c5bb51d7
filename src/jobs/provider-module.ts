import type { z } from "zod";
import type { Config } from "../config.ts";
import type { ProviderFacts } from "../providers.ts";
import type { JobRow } from "../store/types.ts";
import type { JobService, ServiceContext } from "./service.ts";

/**
 * What a provider folder exports, once (its index.ts): everything the layers above need
 * of it — its facts (its PROVIDERS row), the one gate, whether it can run here, its job
 * service, its MCP tools, its part of `dl status`. src/services.ts, the MCP tool index,
 * tool availability, MCP tasks, `dl serve` and `dl status` iterate PROVIDER_MODULES
 * (jobs/providers/index.ts) and never name a provider. Whatever is heavy (the engine, a
 * CLI's parsers, the status readers) is loaded on first use, behind `start` and `status`.
 */
export interface ProviderModule<S extends AnyJobService = AnyJobService> {
  readonly facts: ProviderFacts;
  /**
   * Why every entry point refuses under this Config (Gemini without
   * DELEGATE_GEMINI_ALLOW_DANGER), decided once from the Config: a DlError to throw, or
   * null. Checked before anything is loaded or opened.
   */
  refusal?(c: Config): Error | null;
  /** Why its tools cannot run on this machine, or null; cheap facts only (a binary on PATH, a file). */
  unusable(c: Config, m: MachineFacts): string | null;
  /** Its job service (loads its engine): the one place its settings are read from the Config. */
  start(c: Config, ctx: ServiceContext): Promise<S>;
  readonly tools: ProviderTools;
  /** Its part of `dl status`, loaded on first use. */
  status?(): Promise<ProviderStatus>;
  /**
   * What a reaped run spent, from the files it left in its job folder, for the ledger (an
   * agent job's child keeps its transcript). Provider.spent says the same for a live engine.
   */
  spent?(row: JobRow, jobDir: string): Record<string, unknown> | null;
  /**
   * Its CLI's output tail as `dl logs` shows it, when that is more than the text (Codex's
   * event stream as steps); null to show the text as it is.
   */
  outputSteps?(tail: string): string[] | null;
  /** What an active job's child waits for, for `dl status --watch` (agent jobs: a pool slot). */
  slotWait?(stateDir: string, row: JobRow, now: number): { model: string; bucket: string } | null;
}

// biome-ignore lint/suspicious/noExplicitAny: any provider's service, whatever its poll view, answer and extra fields
export type AnyJobService = JobService<any, any, any>;

/** What availability looks at on this machine; tests pass their own. */
export interface MachineFacts {
  /** The path of `bin` on `path`, or null. */
  which(bin: string, path: string): string | null;
  exists(file: string): boolean;
}

/**
 * A provider's MCP tools, as mcp/tools/job-tools.ts makes them: submit_<name>,
 * poll_<name> and cancel_<name> from its task schema, and delegate_to_<name> (one task,
 * waited for; as an MCP task, one submit_<name> job) when it has one.
 */
interface ProviderTools {
  /** The provider's one task schema; submit bounds the list and its total size. */
  task: () => z.ZodType;
  maxTasks: number;
  descriptions: { submit: string; poll: string; cancel: string };
  /** What submit_<name> and poll_<name> answer, when they carry more than the jobs (Codex: its account). */
  submitOutput?: () => z.ZodObject;
  pollOutput?: () => z.ZodObject;
  delegate?: {
    title: string;
    description: string;
    input: () => z.ZodObject;
    output: () => z.ZodObject;
  };
}

/** A provider's part of `dl status`, read without starting its engine. */
export interface ProviderStatus<T = unknown> {
  read(c: Config): Promise<T>;
  /** The section as text, its heading first. */
  render(section: T): string[];
  /** What of it makes `dl status` unhealthy (Gemini's jail when its jobs are allowed). */
  failedChecks?(section: T, c: Config): string[];
  /** Its lines in `dl status --watch`, read fresh every frame. */
  watch?(c: Config): Promise<string[]>;
}
