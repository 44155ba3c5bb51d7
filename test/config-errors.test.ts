import { describe, expect, test } from "bun:test";
import { parseConfig } from "../src/config.ts";

/**
 * Every start-up error message, word for word: the same bad settings gave these texts
 * before config.ts became one table of leaves, and must give them after. "accepted"
 * marks a setting that must still start (Bifrost's variables under LiteLLM, say).
 * The isolation cases keep every other writable dir inside the root, so only the one
 * named escapes.
 */
const HOME = "/tmp/dl-config-errors-home";
const ISOLATION_ROOT = "/tmp/prov-iso";
const INSIDE_ROOT = [
  "DELEGATE_CODEX_STATE_DIR",
  "DELEGATE_GEMINI_STATE_DIR",
  "DELEGATE_DSH_STATE_DIR",
  "DELEGATE_AGENT_STATE_DIR",
  "CODEX_HOME",
  "DELEGATE_CACHE_DIR",
];

const CASES: [Record<string, string>, string][] = [
  [{ DELEGATE_MAX_TURNS_LOCAL: "x" }, 'DELEGATE_MAX_TURNS_LOCAL="x" is invalid: expected an integer from 1 to 40'],
  [{ DELEGATE_MAX_TURNS_LOCAL: "-1" }, 'DELEGATE_MAX_TURNS_LOCAL="-1" is invalid: expected an integer from 1 to 40'],
  [{ DELEGATE_MAX_TURNS_LOCAL: "1.5" }, 'DELEGATE_MAX_TURNS_LOCAL="1.5" is invalid: expected an integer from 1 to 40'],
  [
    { DELEGATE_MAX_TURNS_LOCAL: "99999999999" },
    'DELEGATE_MAX_TURNS_LOCAL="99999999999" is invalid: expected an integer from 1 to 40',
  ],
  [{ DELEGATE_MAX_TURNS_CLOUD: "x" }, 'DELEGATE_MAX_TURNS_CLOUD="x" is invalid: expected an integer from 1 to 40'],
  [{ DELEGATE_MAX_TURNS_CLOUD: "-1" }, 'DELEGATE_MAX_TURNS_CLOUD="-1" is invalid: expected an integer from 1 to 40'],
  [{ DELEGATE_MAX_TURNS_CLOUD: "1.5" }, 'DELEGATE_MAX_TURNS_CLOUD="1.5" is invalid: expected an integer from 1 to 40'],
  [
    { DELEGATE_MAX_TURNS_CLOUD: "99999999999" },
    'DELEGATE_MAX_TURNS_CLOUD="99999999999" is invalid: expected an integer from 1 to 40',
  ],
  [{ DELEGATE_MAX_NUDGES: "x" }, 'DELEGATE_MAX_NUDGES="x" is invalid: expected an integer from 0 to 10'],
  [{ DELEGATE_MAX_NUDGES: "-1" }, 'DELEGATE_MAX_NUDGES="-1" is invalid: expected an integer from 0 to 10'],
  [{ DELEGATE_MAX_NUDGES: "1.5" }, 'DELEGATE_MAX_NUDGES="1.5" is invalid: expected an integer from 0 to 10'],
  [
    { DELEGATE_MAX_NUDGES: "99999999999" },
    'DELEGATE_MAX_NUDGES="99999999999" is invalid: expected an integer from 0 to 10',
  ],
  [
    { DELEGATE_KEEP_TOOL_RESULTS: "x" },
    'DELEGATE_KEEP_TOOL_RESULTS="x" is invalid: expected an integer from 1 to 1000',
  ],
  [
    { DELEGATE_KEEP_TOOL_RESULTS: "-1" },
    'DELEGATE_KEEP_TOOL_RESULTS="-1" is invalid: expected an integer from 1 to 1000',
  ],
  [
    { DELEGATE_KEEP_TOOL_RESULTS: "1.5" },
    'DELEGATE_KEEP_TOOL_RESULTS="1.5" is invalid: expected an integer from 1 to 1000',
  ],
  [
    { DELEGATE_KEEP_TOOL_RESULTS: "99999999999" },
    'DELEGATE_KEEP_TOOL_RESULTS="99999999999" is invalid: expected an integer from 1 to 1000',
  ],
  [{ DELEGATE_CONTEXT_BUDGET: "x" }, 'DELEGATE_CONTEXT_BUDGET="x" is invalid: expected an integer from 1 to 100000000'],
  [
    { DELEGATE_CONTEXT_BUDGET: "-1" },
    'DELEGATE_CONTEXT_BUDGET="-1" is invalid: expected an integer from 1 to 100000000',
  ],
  [
    { DELEGATE_CONTEXT_BUDGET: "1.5" },
    'DELEGATE_CONTEXT_BUDGET="1.5" is invalid: expected an integer from 1 to 100000000',
  ],
  [
    { DELEGATE_CONTEXT_BUDGET: "99999999999" },
    'DELEGATE_CONTEXT_BUDGET="99999999999" is invalid: expected an integer from 1 to 100000000',
  ],
  [{ DELEGATE_MAX_BATCH_SIZE: "x" }, 'DELEGATE_MAX_BATCH_SIZE="x" is invalid: expected an integer from 1 to 64'],
  [{ DELEGATE_MAX_BATCH_SIZE: "-1" }, 'DELEGATE_MAX_BATCH_SIZE="-1" is invalid: expected an integer from 1 to 64'],
  [{ DELEGATE_MAX_BATCH_SIZE: "1.5" }, 'DELEGATE_MAX_BATCH_SIZE="1.5" is invalid: expected an integer from 1 to 64'],
  [
    { DELEGATE_MAX_BATCH_SIZE: "99999999999" },
    'DELEGATE_MAX_BATCH_SIZE="99999999999" is invalid: expected an integer from 1 to 64',
  ],
  [
    { DELEGATE_MAX_BASH_CONCURRENT: "x" },
    'DELEGATE_MAX_BASH_CONCURRENT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_MAX_BASH_CONCURRENT: "-1" },
    'DELEGATE_MAX_BASH_CONCURRENT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_MAX_BASH_CONCURRENT: "1.5" },
    'DELEGATE_MAX_BASH_CONCURRENT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_MAX_BASH_CONCURRENT: "99999999999" },
    'DELEGATE_MAX_BASH_CONCURRENT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CONCURRENCY_DEFAULT: "x" },
    'DELEGATE_CONCURRENCY_DEFAULT="x" is invalid: expected an integer from 1 to 1024',
  ],
  [
    { DELEGATE_CONCURRENCY_DEFAULT: "-1" },
    'DELEGATE_CONCURRENCY_DEFAULT="-1" is invalid: expected an integer from 1 to 1024',
  ],
  [
    { DELEGATE_CONCURRENCY_DEFAULT: "1.5" },
    'DELEGATE_CONCURRENCY_DEFAULT="1.5" is invalid: expected an integer from 1 to 1024',
  ],
  [
    { DELEGATE_CONCURRENCY_DEFAULT: "99999999999" },
    'DELEGATE_CONCURRENCY_DEFAULT="99999999999" is invalid: expected an integer from 1 to 1024',
  ],
  [
    { DELEGATE_CODEX_MAX_CONCURRENT: "x" },
    'DELEGATE_CODEX_MAX_CONCURRENT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_CONCURRENT: "-1" },
    'DELEGATE_CODEX_MAX_CONCURRENT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_CONCURRENT: "1.5" },
    'DELEGATE_CODEX_MAX_CONCURRENT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_CONCURRENT: "99999999999" },
    'DELEGATE_CODEX_MAX_CONCURRENT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "x" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "-1" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "1.5" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "99999999999" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [{ DELEGATE_CODEX_MAX_QUEUE: "x" }, 'DELEGATE_CODEX_MAX_QUEUE="x" is invalid: expected an integer from 0 to 10000'],
  [{ DELEGATE_CODEX_MAX_QUEUE: "-1" }, 'DELEGATE_CODEX_MAX_QUEUE="-1" is invalid: expected an integer from 0 to 10000'],
  [
    { DELEGATE_CODEX_MAX_QUEUE: "1.5" },
    'DELEGATE_CODEX_MAX_QUEUE="1.5" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_CODEX_MAX_QUEUE: "99999999999" },
    'DELEGATE_CODEX_MAX_QUEUE="99999999999" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_GEMINI_MAX_CONCURRENT: "x" },
    'DELEGATE_GEMINI_MAX_CONCURRENT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_GEMINI_MAX_CONCURRENT: "-1" },
    'DELEGATE_GEMINI_MAX_CONCURRENT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_GEMINI_MAX_CONCURRENT: "1.5" },
    'DELEGATE_GEMINI_MAX_CONCURRENT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_GEMINI_MAX_CONCURRENT: "99999999999" },
    'DELEGATE_GEMINI_MAX_CONCURRENT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [{ DELEGATE_GEMINI_MAX_QUEUE: "x" }, 'DELEGATE_GEMINI_MAX_QUEUE="x" is invalid: expected an integer from 0 to 10000'],
  [
    { DELEGATE_GEMINI_MAX_QUEUE: "-1" },
    'DELEGATE_GEMINI_MAX_QUEUE="-1" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_GEMINI_MAX_QUEUE: "1.5" },
    'DELEGATE_GEMINI_MAX_QUEUE="1.5" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_GEMINI_MAX_QUEUE: "99999999999" },
    'DELEGATE_GEMINI_MAX_QUEUE="99999999999" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_DSH_MAX_CONCURRENT: "x" },
    'DELEGATE_DSH_MAX_CONCURRENT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_CONCURRENT: "-1" },
    'DELEGATE_DSH_MAX_CONCURRENT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_CONCURRENT: "1.5" },
    'DELEGATE_DSH_MAX_CONCURRENT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_CONCURRENT: "99999999999" },
    'DELEGATE_DSH_MAX_CONCURRENT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_PER_PROJECT: "x" },
    'DELEGATE_DSH_MAX_PER_PROJECT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_PER_PROJECT: "-1" },
    'DELEGATE_DSH_MAX_PER_PROJECT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_PER_PROJECT: "1.5" },
    'DELEGATE_DSH_MAX_PER_PROJECT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_DSH_MAX_PER_PROJECT: "99999999999" },
    'DELEGATE_DSH_MAX_PER_PROJECT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [{ DELEGATE_DSH_MAX_QUEUE: "x" }, 'DELEGATE_DSH_MAX_QUEUE="x" is invalid: expected an integer from 0 to 10000'],
  [{ DELEGATE_DSH_MAX_QUEUE: "-1" }, 'DELEGATE_DSH_MAX_QUEUE="-1" is invalid: expected an integer from 0 to 10000'],
  [{ DELEGATE_DSH_MAX_QUEUE: "1.5" }, 'DELEGATE_DSH_MAX_QUEUE="1.5" is invalid: expected an integer from 0 to 10000'],
  [
    { DELEGATE_DSH_MAX_QUEUE: "99999999999" },
    'DELEGATE_DSH_MAX_QUEUE="99999999999" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_AGENT_MAX_CONCURRENT: "x" },
    'DELEGATE_AGENT_MAX_CONCURRENT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_CONCURRENT: "-1" },
    'DELEGATE_AGENT_MAX_CONCURRENT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_CONCURRENT: "1.5" },
    'DELEGATE_AGENT_MAX_CONCURRENT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_CONCURRENT: "99999999999" },
    'DELEGATE_AGENT_MAX_CONCURRENT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_PER_PROJECT: "x" },
    'DELEGATE_AGENT_MAX_PER_PROJECT="x" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_PER_PROJECT: "-1" },
    'DELEGATE_AGENT_MAX_PER_PROJECT="-1" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_PER_PROJECT: "1.5" },
    'DELEGATE_AGENT_MAX_PER_PROJECT="1.5" is invalid: expected an integer from 1 to 256',
  ],
  [
    { DELEGATE_AGENT_MAX_PER_PROJECT: "99999999999" },
    'DELEGATE_AGENT_MAX_PER_PROJECT="99999999999" is invalid: expected an integer from 1 to 256',
  ],
  [{ DELEGATE_AGENT_MAX_QUEUE: "x" }, 'DELEGATE_AGENT_MAX_QUEUE="x" is invalid: expected an integer from 0 to 10000'],
  [{ DELEGATE_AGENT_MAX_QUEUE: "-1" }, 'DELEGATE_AGENT_MAX_QUEUE="-1" is invalid: expected an integer from 0 to 10000'],
  [
    { DELEGATE_AGENT_MAX_QUEUE: "1.5" },
    'DELEGATE_AGENT_MAX_QUEUE="1.5" is invalid: expected an integer from 0 to 10000',
  ],
  [
    { DELEGATE_AGENT_MAX_QUEUE: "99999999999" },
    'DELEGATE_AGENT_MAX_QUEUE="99999999999" is invalid: expected an integer from 0 to 10000',
  ],
  [{ DELEGATE_HTTP_TIMEOUT: "x" }, 'DELEGATE_HTTP_TIMEOUT="x" is invalid: expected a number from 1 to 86400'],
  [{ DELEGATE_HTTP_TIMEOUT: "-5" }, 'DELEGATE_HTTP_TIMEOUT="-5" is invalid: expected a number from 1 to 86400'],
  [{ DELEGATE_HTTP_TIMEOUT: "1e12" }, 'DELEGATE_HTTP_TIMEOUT="1e12" is invalid: expected a number from 1 to 86400'],
  [{ DELEGATE_DISPATCH_TIMEOUT: "x" }, 'DELEGATE_DISPATCH_TIMEOUT="x" is invalid: expected a number from 1 to 604800'],
  [
    { DELEGATE_DISPATCH_TIMEOUT: "-5" },
    'DELEGATE_DISPATCH_TIMEOUT="-5" is invalid: expected a number from 1 to 604800',
  ],
  [
    { DELEGATE_DISPATCH_TIMEOUT: "1e12" },
    'DELEGATE_DISPATCH_TIMEOUT="1e12" is invalid: expected a number from 1 to 604800',
  ],
  [{ DELEGATE_RUN_BASH_TIMEOUT: "x" }, 'DELEGATE_RUN_BASH_TIMEOUT="x" is invalid: expected a number from 1 to 86400'],
  [{ DELEGATE_RUN_BASH_TIMEOUT: "-5" }, 'DELEGATE_RUN_BASH_TIMEOUT="-5" is invalid: expected a number from 1 to 86400'],
  [
    { DELEGATE_RUN_BASH_TIMEOUT: "1e12" },
    'DELEGATE_RUN_BASH_TIMEOUT="1e12" is invalid: expected a number from 1 to 86400',
  ],
  [{ DELEGATE_FAILOVER_GRACE: "x" }, 'DELEGATE_FAILOVER_GRACE="x" is invalid: expected a number from 0 to 3600'],
  [{ DELEGATE_FAILOVER_GRACE: "-5" }, 'DELEGATE_FAILOVER_GRACE="-5" is invalid: expected a number from 0 to 3600'],
  [{ DELEGATE_FAILOVER_GRACE: "1e12" }, 'DELEGATE_FAILOVER_GRACE="1e12" is invalid: expected a number from 0 to 3600'],
  [{ DELEGATE_QUEUE_GRACE: "x" }, 'DELEGATE_QUEUE_GRACE="x" is invalid: expected a number from 0 to 86400'],
  [{ DELEGATE_QUEUE_GRACE: "-5" }, 'DELEGATE_QUEUE_GRACE="-5" is invalid: expected a number from 0 to 86400'],
  [{ DELEGATE_QUEUE_GRACE: "1e12" }, 'DELEGATE_QUEUE_GRACE="1e12" is invalid: expected a number from 0 to 86400'],
  [{ DELEGATE_CODEX_STAGGER_S: "x" }, 'DELEGATE_CODEX_STAGGER_S="x" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_CODEX_STAGGER_S: "-5" }, 'DELEGATE_CODEX_STAGGER_S="-5" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_CODEX_STAGGER_S: "1e12" }, 'DELEGATE_CODEX_STAGGER_S="1e12" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_CODEX_QUOTA_WARN: "x" }, 'DELEGATE_CODEX_QUOTA_WARN="x" is invalid: expected a number from 0 to 100'],
  [{ DELEGATE_CODEX_QUOTA_WARN: "-5" }, 'DELEGATE_CODEX_QUOTA_WARN="-5" is invalid: expected a number from 0 to 100'],
  [
    { DELEGATE_CODEX_QUOTA_WARN: "1e12" },
    'DELEGATE_CODEX_QUOTA_WARN="1e12" is invalid: expected a number from 0 to 100',
  ],
  [
    { DELEGATE_CODEX_QUOTA_REFUSE_PCT: "x" },
    'DELEGATE_CODEX_QUOTA_REFUSE_PCT="x" is invalid: expected a number from 0 to 100',
  ],
  [
    { DELEGATE_CODEX_QUOTA_REFUSE_PCT: "-5" },
    'DELEGATE_CODEX_QUOTA_REFUSE_PCT="-5" is invalid: expected a number from 0 to 100',
  ],
  [
    { DELEGATE_CODEX_QUOTA_REFUSE_PCT: "1e12" },
    'DELEGATE_CODEX_QUOTA_REFUSE_PCT="1e12" is invalid: expected a number from 0 to 100',
  ],
  [{ DELEGATE_DSH_STAGGER_S: "x" }, 'DELEGATE_DSH_STAGGER_S="x" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_DSH_STAGGER_S: "-5" }, 'DELEGATE_DSH_STAGGER_S="-5" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_DSH_STAGGER_S: "1e12" }, 'DELEGATE_DSH_STAGGER_S="1e12" is invalid: expected a number from 0 to 600'],
  [{ DELEGATE_WAIT_INTERVAL: "x" }, 'DELEGATE_WAIT_INTERVAL="x" is invalid: expected a number from 0.05 to 3600'],
  [{ DELEGATE_WAIT_INTERVAL: "-5" }, 'DELEGATE_WAIT_INTERVAL="-5" is invalid: expected a number from 0.05 to 3600'],
  [{ DELEGATE_WAIT_INTERVAL: "1e12" }, 'DELEGATE_WAIT_INTERVAL="1e12" is invalid: expected a number from 0.05 to 3600'],
  [
    { DELEGATE_JOB_RETENTION_DAYS: "x" },
    'DELEGATE_JOB_RETENTION_DAYS="x" is invalid: expected a number from 0 to 3650',
  ],
  [
    { DELEGATE_JOB_RETENTION_DAYS: "-5" },
    'DELEGATE_JOB_RETENTION_DAYS="-5" is invalid: expected a number from 0 to 3650',
  ],
  [
    { DELEGATE_JOB_RETENTION_DAYS: "1e12" },
    'DELEGATE_JOB_RETENTION_DAYS="1e12" is invalid: expected a number from 0 to 3650',
  ],
  [
    { DELEGATE_STREAMING: "maybe" },
    'DELEGATE_STREAMING="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_PROMPT_CACHING: "maybe" },
    'DELEGATE_PROMPT_CACHING="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_RUN_BASH: "maybe" },
    'DELEGATE_RUN_BASH="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_RUN_BASH_SANDBOX: "maybe" },
    'DELEGATE_RUN_BASH_SANDBOX="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_ALLOW_PATH_ESCAPE: "maybe" },
    'DELEGATE_ALLOW_PATH_ESCAPE="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_CODEX_ALLOW_DANGER: "maybe" },
    'DELEGATE_CODEX_ALLOW_DANGER="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [
    { DELEGATE_GEMINI_ALLOW_DANGER: "maybe" },
    'DELEGATE_GEMINI_ALLOW_DANGER="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
  ],
  [{ DELEGATE_GATEWAY: "nope" }, 'DELEGATE_GATEWAY="nope" is invalid: expected one of litellm, bifrost'],
  [{ DELEGATE_RESEND_REASONING: "nope" }, 'DELEGATE_RESEND_REASONING="nope" is invalid: expected one of auto, 1, 0'],
  [
    { DELEGATE_LOG_LEVEL: "nope" },
    'DELEGATE_LOG_LEVEL="nope" is invalid: expected one of silent, error, warn, info, debug',
  ],
  [
    { DELEGATE_LOCAL_URL: "ftp://x" },
    'DELEGATE_LOCAL_URL="ftp://x" is invalid: expected an http(s) URL with a host and no credentials (not http(s))',
  ],
  [
    { DELEGATE_LOCAL_URL: "http://user:pw@host/v1" },
    'DELEGATE_LOCAL_URL="http://<redacted>@host/v1" is invalid: expected an http(s) URL with a host and no credentials (credentials in the URL)',
  ],
  [
    { DELEGATE_LOCAL_URL: "not a url" },
    'DELEGATE_LOCAL_URL="not a url" is invalid: expected an http(s) URL with a host and no credentials (not a valid URL)',
  ],
  [
    { DELEGATE_PROVIDER_ALLOW_HOSTS: "a b$c" },
    'DELEGATE_PROVIDER_ALLOW_HOSTS="a b$c" is invalid: expected a comma-separated list of host names or IP addresses',
  ],
  [
    { DELEGATE_ENV_PASSTHROUGH: "OPENAI_API_KEY" },
    'DELEGATE_ENV_PASSTHROUGH="OPENAI_API_KEY" is invalid: expected names that do not look like credentials (OPENAI_API_KEY is refused: API keys never reach agent commands)',
  ],
  [{ DELEGATE_ENV_PASSTHROUGH: "PATH" }, "accepted"],
  [{ DELEGATE_ENV_PASSTHROUGH: "A*" }, "accepted"],
  [{ DELEGATE_CODEX_ENV_PASSTHROUGH: "PATH" }, "accepted"],
  [
    { DELEGATE_CODEX_ENV_PASSTHROUGH: "X*" },
    'DELEGATE_CODEX_ENV_PASSTHROUGH="X*" is invalid: expected a comma-separated list of exact environment variable names',
  ],
  [{ DELEGATE_CODEX_ENV_PASSTHROUGH: "MY_KEY" }, "accepted"],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "9" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="9" is invalid: expected a value > 0 and <= DELEGATE_CODEX_MAX_CONCURRENT (8)',
  ],
  [
    { DELEGATE_DSH_MAX_PER_PROJECT: "3" },
    'DELEGATE_DSH_MAX_PER_PROJECT="3" is invalid: expected a value > 0 and <= DELEGATE_DSH_MAX_CONCURRENT (2)',
  ],
  [
    { DELEGATE_AGENT_MAX_PER_PROJECT: "5" },
    'DELEGATE_AGENT_MAX_PER_PROJECT="5" is invalid: expected a value > 0 and <= DELEGATE_AGENT_MAX_CONCURRENT (4)',
  ],
  [
    { DELEGATE_CODEX_MAX_PER_PROJECT: "3", DELEGATE_CODEX_MAX_CONCURRENT: "2" },
    'DELEGATE_CODEX_MAX_PER_PROJECT="3" is invalid: expected a value > 0 and <= DELEGATE_CODEX_MAX_CONCURRENT (2)',
  ],
  [{ DELEGATE_BIFROST_URL: "ftp://x" }, "accepted"],
  [{ DELEGATE_BIFROST_API: "nope" }, "accepted"],
  [
    { DELEGATE_GATEWAY: "bifrost" },
    "DELEGATE_BIFROST_URL=unset is invalid: expected the Bifrost base URL when DELEGATE_GATEWAY=bifrost",
  ],
  [
    { DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: "ftp://x" },
    'DELEGATE_BIFROST_URL="ftp://x" is invalid: expected an http(s) URL with a host and no credentials (not http(s))',
  ],
  [
    { DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: "http://b:8080", DELEGATE_BIFROST_LOCAL_URL: "nope" },
    'DELEGATE_BIFROST_LOCAL_URL="nope" is invalid: expected an http(s) URL with a host and no credentials (not a valid URL)',
  ],
  [
    { DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: "http://b:8080", DELEGATE_BIFROST_API: "anthropic" },
    'DELEGATE_BIFROST_API="anthropic" is invalid: expected one of litellm, openai',
  ],
  [{ DELEGATE_GATEWAY: "BIFROST", DELEGATE_BIFROST_URL: "http://b:8080" }, "accepted"],
  [
    { DELEGATE_GATEWAY: " bifrost ", DELEGATE_BIFROST_URL: "http://b:8080", DELEGATE_BIFROST_VK_LOCAL: "sk-secret" },
    "accepted",
  ],
  [
    { DELEGATE_CONCURRENCY_LOCAL: "0" },
    'DELEGATE_CONCURRENCY_LOCAL="0" is invalid: expected an integer from 1 to 1024',
  ],
  [{ DELEGATE_CONCURRENCY_GLM_: "x" }, 'DELEGATE_CONCURRENCY_GLM_="x" is invalid: expected an integer from 1 to 1024'],
  [
    { DELEGATE_CONCURRENCY_DEFAULT: "0" },
    'DELEGATE_CONCURRENCY_DEFAULT="0" is invalid: expected an integer from 1 to 1024',
  ],
  [
    {
      DELEGATE_MAX_TURNS_LOCAL:
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    },
    'DELEGATE_MAX_TURNS_LOCAL="xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." is invalid: expected an integer from 1 to 40',
  ],
  [
    { DELEGATE_MAX_TURNS_LOCAL: "1\n2\u202e" },
    'DELEGATE_MAX_TURNS_LOCAL="1 2 " is invalid: expected an integer from 1 to 40',
  ],
  [{ DELEGATE_LOCAL_URL: "http://h/v1?key=sk-123456" }, "accepted"],
  [{ DELEGATE_MAX_TURNS_LOCAL: "  " }, "accepted"],
  [
    { DELEGATE_TEST_ISOLATION: "1" },
    'DELEGATE_TEST_ISOLATION_ROOT="" is invalid: expected an absolute path while DELEGATE_TEST_ISOLATION is set',
  ],
  [
    { DELEGATE_TEST_ISOLATION: "", DELEGATE_TEST_ISOLATION_ROOT: "relative/x" },
    'DELEGATE_TEST_ISOLATION_ROOT="relative/x" is invalid: expected an absolute path while DELEGATE_TEST_ISOLATION is set',
  ],
  [
    {
      DELEGATE_TEST_ISOLATION: "1",
      DELEGATE_TEST_ISOLATION_ROOT: "/tmp/prov-iso",
      DELEGATE_CODEX_STATE_DIR: "/elsewhere/codex",
    },
    "DELEGATE_CODEX_STATE_DIR resolves outside DELEGATE_TEST_ISOLATION_ROOT while test isolation is on; refusing to touch it",
  ],
  [
    {
      DELEGATE_TEST_ISOLATION: "1",
      DELEGATE_TEST_ISOLATION_ROOT: "/tmp/prov-iso",
      DELEGATE_AGENT_STATE_DIR: "/elsewhere/agent",
    },
    "DELEGATE_AGENT_STATE_DIR resolves outside DELEGATE_TEST_ISOLATION_ROOT while test isolation is on; refusing to touch it",
  ],
  [
    { DELEGATE_TEST_ISOLATION: "1", DELEGATE_TEST_ISOLATION_ROOT: "/tmp/prov-iso", CODEX_HOME: "/elsewhere/.codex" },
    "CODEX_HOME resolves outside DELEGATE_TEST_ISOLATION_ROOT while test isolation is on; refusing to touch it",
  ],
  [
    {
      DELEGATE_TEST_ISOLATION: "1",
      DELEGATE_TEST_ISOLATION_ROOT: "/tmp/prov-iso",
      DELEGATE_CACHE_DIR: "/elsewhere/cache",
    },
    "cache dir resolves outside DELEGATE_TEST_ISOLATION_ROOT while test isolation is on; refusing to touch it",
  ],
  [{ HOME: "" }, "HOME=unset is invalid: expected the user's home directory"],
];

function outcome(env: Record<string, string>): string {
  const full: Record<string, string | undefined> = { HOME, PATH: "/usr/bin:/bin", ...env };
  if (env.DELEGATE_TEST_ISOLATION_ROOT === ISOLATION_ROOT) {
    for (const k of INSIDE_ROOT) full[k] ??= `${ISOLATION_ROOT}/${k}`;
  }
  try {
    parseConfig(full, { home: full.HOME === "" ? undefined : HOME, platform: "linux", cwd: "/" });
    return "accepted";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("config errors, word for word", () => {
  test.each(CASES)("%j", (env, message) => {
    expect(outcome(env)).toBe(message);
  });
});
