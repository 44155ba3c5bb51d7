#!/usr/bin/env sh
# Register dl with Claude Code once, for every project (user scope): the same line that
# install.sh and `dl init` print. It carries no setting and no key: every dl process
# (each window's `dl serve`, the shell commands, the watcher) reads them from the settings
# file `dl init` writes (~/.config/dl/settings.env), so all of them share one set of
# pools, queues and job state on this machine.
DL="${DL:-$(command -v dl || echo "$HOME/.local/bin/dl")}"

claude mcp add delegate-local --scope user -- "$DL" serve

# Settings (gateway URL, key, models, Bifrost …) go in the settings file, not here:
#   dl init                      # finds a local model server, writes the file (0600)
#   $EDITOR ~/.config/dl/settings.env   # NAME=value lines, docs/CONFIGURATION.md
