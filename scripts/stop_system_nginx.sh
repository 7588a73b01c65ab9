#!/usr/bin/env bash
# scripts/stop_system_nginx.sh: Debian's nginx package may start a system
# nginx on port 80 (where policy-rc.d allows it); make test-deploy runs its
# own, unprivileged, so stop and disable that one. Does nothing when none
# runs (idempotent).
if [ -f /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
  echo "deps: stopping the system nginx"
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo nginx -s stop
  if command -v systemctl >/dev/null 2>&1; then $sudo systemctl disable nginx >/dev/null 2>&1 || true; fi
fi
