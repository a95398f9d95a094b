#!/bin/sh
# Secrets from files: for each of the variables below whose NAME_FILE is set (pointing at a
# Compose secret under /run/secrets), export NAME with the file's content, so no secret is
# written in docker-compose.yml or the environment it passes. Other *_FILE variables (such as
# SSL_CERT_FILE) are left alone.
set -eu
for var in HUDDLE_ADMIN_TOKEN HUDDLE_TOKEN HUDDLE_DATABASE_URL PGPASSWORD; do
  eval "file=\${${var}_FILE:-}"
  [ -n "$file" ] || continue
  if [ ! -r "$file" ]; then
    echo "huddle: ${var}_FILE names $file, which cannot be read" >&2
    exit 2
  fi
  export "$var=$(cat "$file")"
  unset "${var}_FILE"
done
exec "$@"
