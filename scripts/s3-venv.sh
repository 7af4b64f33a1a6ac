#!/usr/bin/env bash
# Makes (once) the virtualenv the S3 tests use: moto's S3-compatible server (`moto_server`) and
# botocore's SigV4 signer, pinned in Tests/S3/requirements.txt. Prints the venv's directory.
# Idempotent: a venv whose requirements are installed is reused (a stamp file records them).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/Tests/.work/s3-venv"
stamp="$venv/.requirements"
if ! cmp -s Tests/S3/requirements.txt "$stamp" 2>/dev/null || [ ! -x "$venv/bin/moto_server" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q -r Tests/S3/requirements.txt >&2
    cp Tests/S3/requirements.txt "$stamp"
fi
echo "$venv"
