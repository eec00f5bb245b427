#!/bin/sh
# The tests start throw-away PostgreSQL clusters (tests/pg_server.py): make sure its programs are here.
# Installs Debian's postgresql package when initdb is absent (as root, with apt-get); otherwise says how.
set -eu
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    exit 0
fi
echo "the tests need PostgreSQL's server programs (initdb, pg_ctl): install the postgresql package" >&2
echo "(Debian/Ubuntu: sudo apt-get install -y postgresql), then run the tests again" >&2
exit 1
