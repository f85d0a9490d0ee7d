#!/usr/bin/env bash
# Starts (or stops) the real servers the example scenarios run against, on loopback only:
#   nginx  https://127.0.0.1:18443  TLS                     (seed 001, 003)
#          https://127.0.0.1:18444  TLS + client certificate (seed 001, 003)
#          https://127.0.0.1:18445…18447  three more such "instances" (seed 003); one nginx
#                                   serves them all, so they show round-robin, not scaling
#          http://127.0.0.1:18081   a bearer-token gate in front of etcd (seed 000)
#          http://127.0.0.1:18080   plain HTTP: TLS ended before it, at a balancer (seed 001)
#          https://127.0.0.1:18448, 18449  TLS + client certificate, each port an "instance"
#                                   answering at most 2,000 req/s (limit_req queues the rest),
#                                   standing in for a service with its own capacity (seed 003)
#   etcd   http://127.0.0.1:23790   its v3 JSON gateway     (seed 000, 002)
# Certificates (a test CA, server and client) are made here with openssl.
# Usage: examples/servers.sh start|stop     (state in examples/.run; stops only what it started)
set -euo pipefail
cd "$(dirname "$0")"
RUN="$PWD/.run"

need() { command -v "$1" >/dev/null || { echo "servers.sh: $1 is needed (apt-get install -y $2)" >&2; exit 1; }; }

start() {
  need nginx nginx; need etcd etcd-server; need openssl openssl; need curl curl
  mkdir -p "$RUN/certs" "$RUN/logs" "$RUN/tmp" "$RUN/www"
  printf 'ok\n' > "$RUN/www/ok.txt"
  if [ -f "$RUN/nginx.pid" ] || [ -f "$RUN/etcd.pid" ]; then
    echo "servers.sh: already started (run stop first)" >&2; exit 1
  fi
  local c="$RUN/certs"
  if [ ! -f "$c/client.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=headroom-example-ca \
      -keyout "$c/ca.key" -out "$c/ca.pem" 2>/dev/null
    for who in server client; do
      openssl req -newkey rsa:2048 -nodes -subj "/CN=$who" -keyout "$c/$who.key" -out "$c/$who.csr" 2>/dev/null
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$c/$who.ext"
      openssl x509 -req -in "$c/$who.csr" -CA "$c/ca.pem" -CAkey "$c/ca.key" -CAcreateserial \
        -days 30 -extfile "$c/$who.ext" -out "$c/$who.pem" 2>/dev/null
    done
  fi
  cat > "$RUN/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off;
error_log $RUN/logs/nginx-error.log warn; pid $RUN/nginx.pid.internal;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 1000000;
  client_body_temp_path $RUN/tmp/body; proxy_temp_path $RUN/tmp/proxy;
  fastcgi_temp_path $RUN/tmp/fcgi; uwsgi_temp_path $RUN/tmp/uwsgi; scgi_temp_path $RUN/tmp/scgi;
  upstream etcd { server 127.0.0.1:23790; keepalive 32; }
  limit_req_zone \$server_port zone=instance:1m rate=2000r/s;
  server { listen 127.0.0.1:18080; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:18448 ssl; listen 127.0.0.1:18449 ssl;
           ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           ssl_verify_client on; ssl_client_certificate $c/ca.pem;
           location / { limit_req zone=instance burst=1000000; root $RUN/www; } }
  server { listen 127.0.0.1:18443 ssl; ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:18444 ssl; listen 127.0.0.1:18445 ssl; listen 127.0.0.1:18446 ssl;
           listen 127.0.0.1:18447 ssl; ssl_certificate $c/server.pem; ssl_certificate_key $c/server.key;
           ssl_verify_client on; ssl_client_certificate $c/ca.pem;
           location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:18081;
           location = /v3/login { return 200 '{"token":"example-token"}'; }
           location / {
             if (\$http_authorization != "Bearer example-token") { return 401; }
             proxy_pass http://etcd; proxy_http_version 1.1; proxy_set_header Connection "";
             proxy_set_header Authorization "";
           } }
}
CONF
  # A port another process holds would make nginx give up after retrying, while the ports it
  # did bind answer the readiness check below: refuse to start instead.
  for port in 18080 18081 18443 18444 18445 18446 18447 18448 18449 23790 23800; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "servers.sh: port $port is taken by another process; stop it first" >&2; exit 1
    fi
  done
  nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/logs/nginx-error.log" >/dev/null 2>&1 &
  echo $! > "$RUN/nginx.pid"
  etcd --name example --data-dir "$RUN/etcd" \
    --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster example=http://127.0.0.1:23800 >"$RUN/logs/etcd.log" 2>&1 &
  echo $! > "$RUN/etcd.pid"
  for _ in $(seq 100); do
    if curl -sf -X POST http://127.0.0.1:23790/v3/kv/range -d '{"key":"AA=="}' >/dev/null 2>&1 \
       && (exec 3<>/dev/tcp/127.0.0.1/18443) 2>/dev/null; then
      echo "servers started: nginx (pid $(cat "$RUN/nginx.pid")), etcd (pid $(cat "$RUN/etcd.pid"))"
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
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
