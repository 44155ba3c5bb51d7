import cancelDshText from "../../jobs/providers/dsh/cancel-dsh.txt" with { type: "text" };
import pollDshText from "../../jobs/providers/dsh/poll-dsh.txt" with { type: "text" };
import submitDshText from "../../jobs/providers/dsh/submit-dsh.txt" with { type: "text" };
import { dshTaskInput } from "../../jobs/providers/dsh/task.ts";
import type { ServerDeps } from "../../services.ts";
import type { ToolDef } from "../tool-table.ts";
import { jobTools } from "./job-tools.ts";

const DSH_PRIVACY =
  "Cloud models take code only: never send PHI or real personal data, in the task or in any file under workdir.";

/** The three dsh tools: the job trio on one DshService per server, started on first use. */
export function dshTools(deps: ServerDeps): ToolDef[] {
  return jobTools({
    kind: "dsh",
    label: "dsh",
    idPrefix: "dsh-",
    task: dshTaskInput,
    maxTasks: 256,
    descriptions: {
      submit: `${submitDshText.trim()} ${DSH_PRIVACY}`,
      poll: pollDshText.trim(),
      cancel: cancelDshText.trim(),
    },
    service: deps.dsh,
  });
}
