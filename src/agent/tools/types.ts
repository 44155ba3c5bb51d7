import { z } from "zod";
import type { JsonSchema, ToolSpec } from "../../backends/types.ts";

/** What every tool call gets: where it runs and how to stop it. */
export type ToolContext = {
  /** realpath of the workdir. */
  workdir: string;
  /** DELEGATE_ALLOW_PATH_ESCAPE: skip confinement (the user trusts the agent). */
  allowEscape: boolean;
  signal: AbortSignal;
};

export type ToolOutcome = {
  /** Text the model sees as the tool_result. */
  content: string;
  is_error: boolean;
  /** Why a call was refused when a kind names it (`path_refused`: a protected path). */
  failure_kind?: "path_refused";
  /** Set by run_bash only: what the server measured, not what the model claims. */
  bash?: { exitCode: number | null; timedOut: boolean };
  /** Set by run_bash's jail: the jail_git_tampered verdict (what it moved out, and where). It fails the run. */
  tamper?: string;
};

export type AgentTool = {
  spec: ToolSpec;
  /** Set on the stand-in for a tool the agent's `tools:` line does not grant. */
  refused?: boolean;
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
};

export const ok = (content: string): ToolOutcome => ({ content, is_error: false });
export const fail = (content: string): ToolOutcome => ({ content, is_error: true });

/**
 * A tool from one zod schema for its input: the model is sent the JSON Schema generated
 * from it, and the arguments it sends back are parsed with it, so the two cannot drift.
 * Arguments that do not fit come back to the model as an error result naming the field.
 */
export function defineTool<S extends z.ZodObject>(def: {
  name: string;
  description: string;
  input: S;
  run(args: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
}): AgentTool {
  return {
    spec: { name: def.name, description: def.description, input_schema: modelSchema(def.input) },
    async run(input, ctx) {
      const parsed = def.input.safeParse(input);
      if (!parsed.success) return fail(`${def.name}: ${describeIssues(parsed.error)}`);
      return await def.run(parsed.data, ctx);
    },
  };
}

/**
 * An optional whole number >= `min`. Models send numbers as strings often enough to
 * accept both, and an empty string or null as "not given".
 */
export function optionalInt(name: string, min: number) {
  const error = `${name} must be an integer >= ${min}`;
  return z.preprocess(
    (v) => (v === "" || v === null ? undefined : v),
    z.coerce.number({ error }).int({ error }).min(min, { error }).optional(),
  );
}

const schemas = new WeakMap<z.ZodObject, JsonSchema>();

/**
 * The JSON Schema of a tool's input as the model sees it, made once per schema (the
 * request encoder caches by identity). zod's draft marker and the safe-integer bounds it
 * adds to every integer are left out: they only cost tokens.
 */
function modelSchema(input: z.ZodObject): JsonSchema {
  let schema = schemas.get(input);
  if (!schema) {
    const { $schema: _draft, ...generated } = z.toJSONSchema(input, {
      io: "input",
      override: ({ jsonSchema }) => {
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    });
    schema = generated as JsonSchema;
    schemas.set(input, schema);
  }
  return schema;
}

/** zod's issues as one line for the model, each naming the argument it is about. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.join(".");
      return field && !issue.message.startsWith(field) ? `${field}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

/** The path argument of the file tools; confinePath decides where it may point. */
export function pathArg() {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? "path is missing: pass a file path relative to the working directory"
          : "path must be a string: a file path relative to the working directory",
    })
    .describe("File path, relative to the working directory");
}
