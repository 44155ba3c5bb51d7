import type { Tool } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { once } from "../once.ts";
import type { ServerDeps } from "../services.ts";
import { toolJsonSchema } from "./json-schema.ts";
import { type BackendVerdict, backendVerdicts } from "./tool-availability.ts";
import type { Backend, TaskAnswer, ToolDef } from "./tool-table.ts";
import { dlTools } from "./tools/index.ts";

/** A listed tool with its schemas built once, on first use. */
export interface ListedTool {
  def: ToolDef;
  input: () => z.ZodObject;
  output: () => z.ZodObject;
}

/** JSON Schema for tools/list, without what says nothing (json-schema.ts). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  return toolJsonSchema(schema, io) as Tool["inputSchema"];
}

/**
 * The tools one `dl serve` offers, from the table (tools/index.ts) less the backends that
 * cannot run here (tool-availability.ts). Both protocol eras and every server instance of
 * the process share it, so the JSON Schema of tools/list is made once, when first asked,
 * and kept in memory for the life of the process.
 */
export class ToolSurface {
  readonly verdicts: Record<Backend, BackendVerdict>;
  private readonly listed = new Map<string, ListedTool>();
  private readonly unlisted = new Map<string, Backend>();

  constructor(deps: ServerDeps, o: { tools?: ToolDef[] } = {}) {
    const tools = o.tools ?? dlTools(deps);
    this.verdicts = backendVerdicts(deps.config, deps.providers);
    for (const def of tools) {
      if (!this.verdicts[def.backend]?.listed) {
        this.unlisted.set(def.name, def.backend);
        continue;
      }
      this.listed.set(def.name, { def, input: once(def.input), output: once(def.output) });
    }
  }

  tool(name: string): ListedTool | undefined {
    return this.listed.get(name);
  }

  /** The completed-task answer of a listed tool that runs as `provider`'s jobs; undefined otherwise. */
  taskAnswer(name: string, provider: string): TaskAnswer | undefined {
    const def = this.listed.get(name)?.def;
    return def?.task && def.backend === provider ? def.task.answer : undefined;
  }

  names(): string[] {
    return [...this.listed.keys()];
  }

  /** Why a tool the table has is not offered here, or undefined for a name dl does not know. */
  whyUnlisted(name: string): string | undefined {
    const backend = this.unlisted.get(name);
    return backend && this.verdicts[backend]?.why;
  }

  /**
   * tools/list's tools, made on the first tools/list and kept for the process's life.
   * Tools that share an output schema's builder (every cancel_*, most submit_* and poll_*)
   * share its JSON Schema, converted once: zod's conversion is most of tools/list's CPU,
   * and the same builder makes the same schema.
   */
  readonly toolsList = once((): Tool[] => {
    const outputs = new Map<ToolDef["output"], Tool["outputSchema"]>();
    return [...this.listed.values()].map(({ def, input, output }) => {
      let outputSchema = outputs.get(def.output);
      if (!outputSchema) {
        outputSchema = jsonSchema(output(), "output") as Tool["outputSchema"];
        outputs.set(def.output, outputSchema);
      }
      return {
        name: def.name,
        title: def.title,
        description: def.description,
        inputSchema: jsonSchema(input(), "input"),
        outputSchema,
        annotations: def.annotations,
      };
    });
  });
}
