# The ports of servers.sh, in one place; sourced by servers.sh, seed.sh and
# capacity-studies.sh (not run on its own). Without PORT_BASE they are the ports the examples
# have always used; with PORT_BASE=N they are N … N+10, so that several people (or agents) on
# one machine each run their own servers: two bases at least 11 apart never share a port.
# Every port is exported as PORT_*, the variables the scenario files read
# (`url: https://127.0.0.1:${PORT_TLS:-18443}/`), so `headroom run` finds the servers too.
# The servers' state (pids, logs, nginx.conf) is kept per base, in $SERVERS.
# shellcheck disable=SC2034  # SERVERS and PORTS are for the scripts that source this file
if [ -n "${PORT_BASE:-}" ]; then
  if ! [[ "$PORT_BASE" =~ ^[0-9]+$ ]] || [ "$PORT_BASE" -lt 1024 ] || [ "$PORT_BASE" -gt 65525 ]; then
    echo "PORT_BASE=$PORT_BASE is not a port from 1024 to 65525 (the servers use it to PORT_BASE+10)" >&2
    exit 2
  fi
  b=$((10#$PORT_BASE))
  export PORT_HTTP=$b PORT_GATE=$((b + 1)) PORT_TLS=$((b + 2)) PORT_MTLS=$((b + 3)) \
    PORT_MTLS_2=$((b + 4)) PORT_MTLS_3=$((b + 5)) PORT_MTLS_4=$((b + 6)) \
    PORT_INSTANCE_1=$((b + 7)) PORT_INSTANCE_2=$((b + 8)) PORT_ETCD=$((b + 9)) \
    PORT_ETCD_PEER=$((b + 10))
  SERVERS=".run/servers-$b"
  unset b
else
  export PORT_HTTP=18080 PORT_GATE=18081 PORT_TLS=18443 PORT_MTLS=18444 PORT_MTLS_2=18445 \
    PORT_MTLS_3=18446 PORT_MTLS_4=18447 PORT_INSTANCE_1=18448 PORT_INSTANCE_2=18449 \
    PORT_ETCD=23790 PORT_ETCD_PEER=23800
  SERVERS=".run/servers"
fi
# Each port with what it serves, for the messages that name a port.
PORTS=(
  "$PORT_HTTP:plain HTTP (PORT_HTTP)" "$PORT_GATE:the token gate (PORT_GATE)"
  "$PORT_TLS:TLS (PORT_TLS)" "$PORT_MTLS:mutual TLS (PORT_MTLS)"
  "$PORT_MTLS_2:mutual TLS (PORT_MTLS_2)" "$PORT_MTLS_3:mutual TLS (PORT_MTLS_3)"
  "$PORT_MTLS_4:mutual TLS (PORT_MTLS_4)" "$PORT_INSTANCE_1:seed 003's instance 1 (PORT_INSTANCE_1)"
  "$PORT_INSTANCE_2:seed 003's instance 2 (PORT_INSTANCE_2)" "$PORT_ETCD:etcd (PORT_ETCD)"
  "$PORT_ETCD_PEER:etcd's peer port (PORT_ETCD_PEER)"
)
