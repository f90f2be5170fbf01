#!/usr/bin/env bash
# Starts (up) or stops (down) on this machine what the deploy manager drives: the Docker engine, an nginx with
# its own prefix on unprivileged loopback ports, pebble (an ACME test CA) with its DNS stand-in, and a local
# image registry on 127.0.0.1. Installs Debian's packages when missing (run as root). `up` prints only
# `export` lines on standard output, so that `eval "$(scripts/services.sh up)"` points Gatehouse at them;
# everything else goes to standard error. `down` stops what `up` started, and only that. `prepare` only installs
# what is missing and starts the Docker engine: `npm test` runs it first, so the README's test command is all a
# fresh machine needs.
#
# Settings (environment): GATEHOUSE_SERVICES_DIR (state, default /tmp/gatehouse-services), NGINX_HTTP_PORT
# (18080), NGINX_HTTPS_PORT (18443), PEBBLE_PORT (14000), PEBBLE_MANAGEMENT_PORT (15000), PEBBLE_DNS_PORT (8053),
# PEBBLE_DNS_MANAGEMENT_PORT (PEBBLE_DNS_PORT + 2), REGISTRY_PORT (5000).
set -euo pipefail

STATE="${GATEHOUSE_SERVICES_DIR:-/tmp/gatehouse-services}"
HTTP_PORT="${NGINX_HTTP_PORT:-18080}"
HTTPS_PORT="${NGINX_HTTPS_PORT:-18443}"
PEBBLE_PORT="${PEBBLE_PORT:-14000}"
PEBBLE_MANAGEMENT_PORT="${PEBBLE_MANAGEMENT_PORT:-15000}"
PEBBLE_DNS_PORT="${PEBBLE_DNS_PORT:-8053}"
PEBBLE_DNS_MANAGEMENT_PORT="${PEBBLE_DNS_MANAGEMENT_PORT:-$((PEBBLE_DNS_PORT + 2))}"
REGISTRY_PORT="${REGISTRY_PORT:-5000}"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

say() { printf '%s\n' "$*" >&2; }

wait_for() { # what, log name (or -), command...
    local what="$1" log="$2"
    shift 2
    # Up to a minute: a loaded machine (the suite under coverage on two cores) starts things slowly.
    for _ in $(seq 1 120); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    say "services: $what did not come up"
    if [ "$log" != - ] && [ -f "$STATE/$log.log" ]; then
        say "services: the last lines of $STATE/$log.log:"
        tail -n 20 "$STATE/$log.log" >&2
    fi
    return 1
}

install_missing() {
    local missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    [ -x "$NGINX" ] || missing+=(nginx)
    command -v pebble >/dev/null 2>&1 || missing+=(pebble)
    command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
    # A static busybox is what locally built test images (FROM scratch) are made of.
    [ -x /bin/busybox ] || missing+=(busybox-static)
    # Real apps for the sign-in tests are built from Debian's packages (debootstrap); browser tests drive chromium.
    command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    # What single tests drive: BIND for DNS updates, htpasswd for a registry that asks for credentials, git.
    [ -x /usr/sbin/named ] || missing+=(bind9)
    command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)
    command -v git >/dev/null 2>&1 || missing+=(git)
    # chattr makes a folder immutable in the rollback tests (e2fsprogs is essential in Debian; kept here all the same).
    command -v chattr >/dev/null 2>&1 || missing+=(e2fsprogs)
    # Apps' backups are restic repositories; the SFTP backend's test starts Debian's OpenSSH server on loopback.
    command -v restic >/dev/null 2>&1 || missing+=(restic)
    [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
    # The SFTP test makes its host and client keys with ssh-keygen (openssh-client, named rather than assumed).
    command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
    if [ "${#missing[@]}" -gt 0 ]; then
        say "services: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
            { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
        NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
    fi
    # Packages may start their own services; ours run with their own settings instead. nginx's and the registry's
    # init scripts stop the process their pid file names. BIND's does not: with no pid file it takes any
    # /usr/sbin/named (pgrep) and SIGKILLs it after ten seconds, a test's own named included, so the package's named
    # is stopped here by its pid file alone.
    for service in nginx docker-registry; do service "$service" stop >/dev/null 2>&1 || true; done
    stop_by_pid_file /run/named/named.pid /usr/sbin/named
}

# Stops the process a package's pid file names, if it is still that program.
stop_by_pid_file() { # pid-file program
    local pid
    pid="$(cat "$1" 2>/dev/null || true)"
    case "$pid" in '' | *[!0-9]*) return 0 ;; esac
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$2" ] && kill "$pid" 2>/dev/null || true
}

# When a process started (field 22 of /proc/<pid>/stat): with its pid, it names that process and no later one.
started_at() { # pid
    awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true
}

start_background() { # name, command...
    local name="$1"
    shift
    "$@" >"$STATE/$name.log" 2>&1 &
    echo "$! $(started_at $!)" >"$STATE/$name.pid"
}

docker_up() {
    if docker info >/dev/null 2>&1; then
        say "services: the Docker engine is already running"
        return
    fi
    start_background dockerd dockerd
    wait_for "the Docker engine" dockerd docker info
}

nginx_up() {
    mkdir -p "$STATE/nginx/sites" "$STATE/nginx/logs" "$STATE/nginx/temp" "$STATE/nginx/acme"
    cat >"$STATE/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $STATE/nginx/nginx.pid;
error_log $STATE/nginx/logs/error.log;
events { worker_connections 256; }
http {
    access_log $STATE/nginx/logs/access.log;
    client_body_temp_path $STATE/nginx/temp/body;
    proxy_temp_path $STATE/nginx/temp/proxy;
    fastcgi_temp_path $STATE/nginx/temp/fastcgi;
    uwsgi_temp_path $STATE/nginx/temp/uwsgi;
    scgi_temp_path $STATE/nginx/temp/scgi;
    server {
        # Unknown names get 404, challenges included: only an app's own site may answer its challenge, even
        # while a reload still has old workers answering with the sites as they were.
        listen 127.0.0.1:$HTTP_PORT default_server;
        location / { return 404; }
    }
    server {
        # Held from the start, not bound by the first site's reload: a port left free until then can be taken by
        # another process, and nginx -t does not bind, so the reload would fail to apply. Unknown names get no TLS.
        listen 127.0.0.1:$HTTPS_PORT ssl default_server;
        ssl_reject_handshake on;
    }
    include $STATE/nginx/sites/*.conf;
}
CONF
    "$NGINX" -t -p "$STATE/nginx" -c "$STATE/nginx/nginx.conf" >&2
    "$NGINX" -p "$STATE/nginx" -c "$STATE/nginx/nginx.conf"
    wait_for "nginx" - curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/"
}

pebble_up() {
    mkdir -p "$STATE/pebble"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$STATE/pebble/key.pem" -out "$STATE/pebble/cert.pem" >/dev/null 2>&1
    cat >"$STATE/pebble/config.json" <<CONF
{"pebble": {"listenAddress": "127.0.0.1:$PEBBLE_PORT", "managementListenAddress": "127.0.0.1:$PEBBLE_MANAGEMENT_PORT",
  "certificate": "$STATE/pebble/cert.pem", "privateKey": "$STATE/pebble/key.pem",
  "httpPort": $HTTP_PORT, "tlsPort": $HTTPS_PORT, "ocspResponderURL": "", "externalAccountBindingRequired": false}}
CONF
    # Every name resolves to this host for pebble, so HTTP-01 challenges come to our nginx.
    start_background pebble-dns pebble-challtestsrv -defaultIPv4 127.0.0.1 -defaultIPv6 "" \
        -dns01 "127.0.0.1:$PEBBLE_DNS_PORT" -http01 "" -https01 "" -tlsalpn01 "" -management "127.0.0.1:$PEBBLE_DNS_MANAGEMENT_PORT"
    PEBBLE_VA_NOSLEEP=1 start_background pebble pebble -config "$STATE/pebble/config.json" -dnsserver "127.0.0.1:$PEBBLE_DNS_PORT"
    wait_for "pebble" pebble curl -s --cacert "$STATE/pebble/cert.pem" "https://127.0.0.1:$PEBBLE_PORT/dir"
}

registry_up() {
    mkdir -p "$STATE/registry/data"
    cat >"$STATE/registry/config.yml" <<CONF
version: 0.1
storage:
  filesystem:
    rootdirectory: $STATE/registry/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REGISTRY_PORT
CONF
    start_background registry docker-registry serve "$STATE/registry/config.yml"
    wait_for "the registry" registry curl -sf "http://127.0.0.1:$REGISTRY_PORT/v2/"
}

up() {
    mkdir -p "$STATE"
    # nginx's workers (user nobody) read challenge files from here.
    chmod 0755 "$STATE"
    install_missing
    docker_up
    nginx_up
    pebble_up
    registry_up
    cat <<EXPORTS
export DOCKER_HOST=unix:///var/run/docker.sock
export NGINX_BIN=$NGINX
export NGINX_CONF=$STATE/nginx/nginx.conf
export NGINX_SITES_DIR=$STATE/nginx/sites
export NGINX_HTTP_PORT=$HTTP_PORT
export NGINX_HTTPS_PORT=$HTTPS_PORT
export NGINX_LISTEN_ADDRESS=127.0.0.1
export ACME_DIRECTORY_URL=https://127.0.0.1:$PEBBLE_PORT/dir
export ACME_CA_FILE=$STATE/pebble/cert.pem
export ACME_WEBROOT=$STATE/nginx/acme
export REGISTRY_URL=127.0.0.1:$REGISTRY_PORT
EXPORTS
}

stop_pid() { # name
    local file="$STATE/$1.pid"
    [ -f "$file" ] || return 0
    local pid started
    read -r pid started <"$file"
    rm -f "$file"
    # A process that ended on its own left its pid to be reused: signal only the very process started here, or
    # a busy machine's other processes (another test's DNS server, say) are killed in its place.
    [ -n "$started" ] && [ "$(started_at "$pid")" = "$started" ] || return 0
    kill "$pid" >/dev/null 2>&1 || true
    for _ in $(seq 1 40); do [ "$(started_at "$pid")" = "$started" ] || return 0; sleep 0.25; done
    kill -9 "$pid" >/dev/null 2>&1 || true
}

down() {
    [ -d "$STATE" ] || return 0
    # By its pid, not `nginx -s quit`: that parses the configuration first, and fails once a site names a
    # certificate that is gone.
    # Only an nginx running with this folder's configuration: a pid file left by one that was killed names
    # whatever process has that pid now.
    local nginx_pid
    nginx_pid="$(cat "$STATE/nginx/nginx.pid" 2>/dev/null || true)"
    if [ -n "$nginx_pid" ] && tr '\0' ' ' <"/proc/$nginx_pid/cmdline" 2>/dev/null | grep -qF "$STATE/nginx/nginx.conf"; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
    fi
    for name in registry pebble pebble-dns dockerd; do stop_pid "$name"; done
    say "services: stopped what was started from $STATE"
}

# What `npm test` runs first (scripts/test.ts): the packages and the Docker engine the suite drives, nothing on ports.
prepare() {
    mkdir -p "$STATE"
    chmod 0755 "$STATE"
    install_missing
    docker_up
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    prepare) prepare ;;
    *)
        say "usage: scripts/services.sh up|down|prepare"
        exit 2
        ;;
esac
