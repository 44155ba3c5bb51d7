import { type Config, loadConfig } from "../config.ts";
import { isDlError } from "../errors.ts";
import { setLogLevel } from "../log.ts";
import { setStoreBusyTimeout } from "../store/db.ts";
import { EXIT } from "./exit.ts";

/**
 * Every command starts here: a bad setting is one line on stderr and exit 2, before the
 * command does anything at all.
 */
export function configOrExit(): Config {
  try {
    const config = loadConfig();
    setLogLevel(config.logLevel);
    setStoreBusyTimeout(config.jobs.storeBusyTimeoutS * 1000);
    return config;
  } catch (e) {
    if (isDlError(e, "bad_config")) {
      // One line: what is wrong (and where it was set, when that is the settings file), then what to run.
      const next = e.data.next_step === true ? "" : "; fix it, then run dl status";
      process.stderr.write(`dl: ${e.message}${next}\n`);
      process.exit(EXIT.usage);
    }
    throw e;
  }
}
