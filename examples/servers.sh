#!/usr/bin/env bash
# Starts (or stops) the real servers the example scenarios run against, on loopback only, on
# the ports of ports.sh (below without PORT_BASE; with PORT_BASE=N the same in order from N):
#   nginx  http://127.0.0.1:18080   plain HTTP: TLS ended before it, at a balancer (seed 001)
#          http://127.0.0.1:18081   a bearer-token gate in front of etcd (seed 000)
#          https://127.0.0.1:18443  TLS                     (seed 001, 003)
#          https://127.0.0.1:18444  TLS + client certificate (seed 001, 003)
#          https://127.0.0.1:18445…18447  three more such "instances" (seed 003); one nginx
#                                   serves them all, so they show round-robin, not scaling
#          https://127.0.0.1:18448, 18449  TLS + client certificate, each port an "instance"
#                                   of a service with its own capacity (seed 003): each
#                                   request takes 5 ms (nginx's echo module, echo_sleep), so
#                                   one user gets about 200 req/s, and each instance answers
#                                   at most 2,000 req/s (limit_req queues the rest)
#   etcd   http://127.0.0.1:23790   its v3 JSON gateway     (seed 000, 002); peers on 23800
# Certificates (a test CA, server and client) are made here with openssl, in .run/certs.
# Usage: [PORT_BASE=N] examples/servers.sh start|stop
#   (state in examples/.run/servers[-N]; stop stops only what this start started)
set -euo pipefail
cd "$(dirname "$0")"
source ./ports.sh
RUN="$PWD/$SERVERS"
CERTS="$PWD/.run/certs"
# The echo module gives seed 003's instances their service time (Debian's package).
ECHO_MODULE=/usr/lib/nginx/modules/ngx_http_echo_module.so

need() { command -v "$1" >/dev/null || { echo "servers.sh: $1 is needed (apt-get install -y $2)" >&2; exit 1; }; }

certs() {
  [ -f "$CERTS/client.pem" ] && return
  # Made aside and moved in whole, so a second start at the same moment never sees half.
  local c
  c="$(mktemp -d "$PWD/.run/certs.XXXXXX")"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=headroom-example-ca \
    -keyout "$c/ca.key" -out "$c/ca.pem" 2>/dev/null
  for who in server client; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$who" -keyout "$c/$who.key" -out "$c/$who.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$c/$who.ext"
    openssl x509 -req -in "$c/$who.csr" -CA "$c/ca.pem" -CAkey "$c/ca.key" -CAcreateserial \
      -days 30 -extfile "$c/$who.ext" -out "$c/$who.pem" 2>/dev/null
  done
  mv -T "$c" "$CERTS" 2>/dev/null || rm -rf "$c"
}

start() {
  need nginx nginx; need etcd etcd-server; need openssl openssl; need curl curl
  if [ ! -f "$ECHO_MODULE" ]; then
    echo "servers.sh: nginx's echo module ($ECHO_MODULE) is needed for seed 003's instances" \
      "(apt-get install -y libnginx-mod-http-echo)" >&2
    exit 1
  fi
  if [ -f "$RUN/nginx.pid" ] || [ -f "$RUN/etcd.pid" ]; then
    echo "servers.sh: already started on these ports (state in $RUN; run stop first)" >&2; exit 1
  fi
  # A port another process holds would make nginx give up after retrying, while the ports it
  # did bind answer the readiness check below: refuse to start instead.
  local entry port
  for entry in "${PORTS[@]}"; do
    port="${entry%%:*}"
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "servers.sh: port $port (${entry#*:}) is taken by another process;" \
        "choose other ports with PORT_BASE (it uses PORT_BASE to PORT_BASE+10)" >&2
      exit 1
    fi
  done
  mkdir -p "$RUN/logs" "$RUN/tmp"
  certs
  local c="$CERTS"
  cat > "$RUN/nginx.conf" <<CONF
load_module $ECHO_MODULE;
worker_processes 1; daemon off; master_process off;
error_log $RUN/logs/nginx-error.log warn; pid $RUN/nginx.pid.internal;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 1000000;
  client_body_temp_path $RUN/tmp/body; proxy_temp_path $RUN/tmp/proxy;
  fastcgi_temp_path $RUN/tmp/fcgi; uwsgi_temp_path $RUN/tmp/uwsgi; scgi_temp_path $RUN/tmp/scgi;
  upstream etcd { server 127.0.0.1:$PORT_ETCD; keepalive 32; }
  limit_req_zone \$server_port zone=instance:1m rate=2000r/s;
  server { listen 127.0.0.1:$PORT_HTTP; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:$PORT_INSTANCE_1 ssl; listen 127.0.0.1:$PORT_INSTANCE_2 ssl;
           ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           ssl_verify_client on; ssl_client_certificate $c/ca.pem;
           location / { limit_req zone=instance burst=1000000; echo_sleep 0.005; echo "ok"; } }
  server { listen 127.0.0.1:$PORT_TLS ssl; ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:$PORT_MTLS ssl; listen 127.0.0.1:$PORT_MTLS_2 ssl; listen 127.0.0.1:$PORT_MTLS_3 ssl;
           listen 127.0.0.1:$PORT_MTLS_4 ssl; ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           ssl_verify_client on; ssl_client_certificate $c/ca.pem;
           location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:$PORT_GATE;
           location = /v3/login { return 200 '{"token":"example-token"}'; }
           location / {
             if (\$http_authorization != "Bearer example-token") { return 401; }
             proxy_pass http://etcd; proxy_http_version 1.1; proxy_set_header Connection "";
             proxy_set_header Authorization "";
           } }
}
CONF
  nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/logs/nginx-error.log" >/dev/null 2>&1 &
  echo $! > "$RUN/nginx.pid"
  local client="http://127.0.0.1:$PORT_ETCD" peer="http://127.0.0.1:$PORT_ETCD_PEER"
  etcd --name example --data-dir "$RUN/etcd" \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "example=$peer" >"$RUN/logs/etcd.log" 2>&1 &
  echo $! > "$RUN/etcd.pid"
  for _ in $(seq 100); do
    if curl -sf -X POST "$client/v3/kv/range" -d '{"key":"AA=="}' >/dev/null 2>&1 \
       && (exec 3<>"/dev/tcp/127.0.0.1/$PORT_INSTANCE_2") 2>/dev/null; then
      echo "servers started: nginx (pid $(cat "$RUN/nginx.pid")), etcd (pid $(cat "$RUN/etcd.pid")), ports $PORT_HTTP…$PORT_ETCD_PEER"
      return
    fi
    sleep 0.1
  done
  echo "servers.sh: the servers did not come up; see $RUN/logs" >&2; stop; exit 1
}

stop() {
  for name in nginx etcd; do
    if [ -f "$RUN/$name.pid" ]; then
      kill "$(cat "$RUN/$name.pid")" 2>/dev/null || true
      rm -f "$RUN/$name.pid"
    fi
  done
  rm -rf "$RUN/etcd"
  echo "servers stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: [PORT_BASE=N] $0 start|stop" >&2; exit 2 ;;
esac
