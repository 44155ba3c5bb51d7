import { providerEntry } from "../../../providers.ts";
import type { ProviderModule } from "../../provider-module.ts";
import cancelText from "./cancel-dsh.txt" with { type: "text" };
import { findDshLauncher } from "./launcher.ts";
import pollText from "./poll-dsh.txt" with { type: "text" };
import type { DshService } from "./service.ts";
import submitText from "./submit-dsh.txt" with { type: "text" };
import { dshTaskInput } from "./task.ts";

const DSH_PRIVACY =
  "Cloud models take code only: never send PHI or real personal data, in the task or in any file under workdir.";

/** DeepSeek-harness jobs through the dsh launcher: submit/poll/cancel_dsh. */
export const dsh = {
  facts: providerEntry("dsh"),
  unusable: (c, m) => {
    const launcher = findDshLauncher(c.dsh.launcher, c.childEnv);
    if (!launcher.ok) return launcher.message;
    return m.exists(c.paths.dshModelsFile)
      ? null
      : `no dsh models file at ${c.paths.dshModelsFile} (DELEGATE_DSH_MODELS_FILE; see examples/dsh-models.json)`;
  },
  start: async (c, ctx) => (await import("./service.ts")).startJobs(c, ctx),
  tools: {
    task: dshTaskInput,
    maxTasks: 256,
    descriptions: {
      submit: `${submitText.trim()} ${DSH_PRIVACY}`,
      poll: pollText.trim(),
      cancel: cancelText.trim(),
    },
  },
  status: async () => (await import("./status.ts")).status,
} satisfies ProviderModule<DshService>;
