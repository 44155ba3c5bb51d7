#!/usr/bin/env bash
# claude-glm: Claude Code itself on GLM (Z.ai's GLM Coding Plan) instead of Anthropic, for
# one session. Your plain `claude` is untouched: only this process's environment changes.
#
# The key: ZAI_API_KEY, or a file holding only the key (default ~/.config/zai/api-key,
# mode 600; ZAI_KEY_FILE names another). Get one at https://z.ai/model-api.
#
#   claude-glm                 an interactive session on GLM
#   claude-glm -p "fix the build"   any Claude Code flag is passed through
#
# Here Claude Code talks to Z.ai directly, so the 1M-context model code (glm-5.2[1m])
# works; through LiteLLM (examples/litellm.example.yaml) use plain glm-5.2.
set -euo pipefail

key_file="${ZAI_KEY_FILE:-$HOME/.config/zai/api-key}"
key="${ZAI_API_KEY:-}"
if [[ -z "$key" && -r "$key_file" ]]; then
  key="$(tr -d '[:space:]' <"$key_file")"
fi
if [[ -z "$key" ]]; then
  {
    echo "claude-glm: no Z.ai key. Set ZAI_API_KEY, or store the key in $key_file:"
    echo "  mkdir -p \"$(dirname "$key_file")\" && (umask 077 && cat >\"$key_file\")   # paste, then Ctrl-D"
  } >&2
  exit 1
fi

export ANTHROPIC_BASE_URL="https://api.z.ai/api/anthropic"
export ANTHROPIC_AUTH_TOKEN="$key"
# Claude Code's tiers mapped to GLM: the large ones with 1M context, the small one fast.
export ANTHROPIC_DEFAULT_OPUS_MODEL="glm-5.2[1m]"
export ANTHROPIC_DEFAULT_SONNET_MODEL="glm-5.2[1m]"
export ANTHROPIC_DEFAULT_HAIKU_MODEL="glm-4.5-air"
# A long agentic turn on a busy plan can take minutes.
export API_TIMEOUT_MS="3000000"
unset ANTHROPIC_API_KEY   # an Anthropic key in the shell would win over the token above

echo "claude-glm: Claude Code on Z.ai (glm-5.2[1m], GLM Coding Plan)" >&2
exec claude "$@"
