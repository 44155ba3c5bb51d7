#!/usr/bin/env sh
# Register dl with Claude Code once, for every project (user scope). Adjust the path and
# the gateway settings; every Claude Code window then starts its own `dl serve`, and all
# of them share pools, queues and job state on this machine.
DL="${DL:-$(pwd)/dist/dl}"

claude mcp add delegate-local --scope user \
  --env DELEGATE_LOCAL_URL=http://localhost:4000/v1/messages \
  --env DELEGATE_LOCAL_KEY="${LITELLM_KEY:-}" \
  --env DELEGATE_LOCAL_MODEL=local-qwen-3-6-35b \
  -- "$DL" serve

# Coding agents (coder, test-writer) use DELEGATE_LOCAL_MODEL unless you name a separate
# coding model. Add one only if your gateway serves it (`dl status` checks that it does):
#   --env DELEGATE_LOCAL_CODING_MODEL=local-coder

# Through Bifrost instead of LiteLLM (local lane on its own host):
# claude mcp add delegate-local --scope user \
#   --env DELEGATE_GATEWAY=bifrost \
#   --env DELEGATE_BIFROST_URL=http://127.0.0.1:4010 \
#   --env DELEGATE_BIFROST_LOCAL_URL=http://127.0.0.1:4011 \
#   --env DELEGATE_BIFROST_VK_CODE=vk-code \
#   --env DELEGATE_BIFROST_VK_LOCAL=vk-local \
#   -- "$DL" serve
