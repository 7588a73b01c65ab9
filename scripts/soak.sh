#!/usr/bin/env bash
# scripts/soak.sh: `make soak`. SOAK_REQUESTS requests (about: loadgen runs
# for a duration calibrated to reach at least that many), SOAK_INFLIGHT in
# flight, through a pipe to examples/spec_server.lua under each of
# SOAK_LUAS; loadgen checks every reply, spec/fault/soak.lua samples the
# server's VmRSS and fails if it grew by more than SOAK_TOLERANCE_KIB after
# the warm-up (the first fifth of the run).
rc=0
for l in $SOAK_LUAS; do
  lua5.4 spec/fault/soak.lua --server-lua $l --requests $SOAK_REQUESTS \
    --inflight $SOAK_INFLIGHT --tolerance-kib $SOAK_TOLERANCE_KIB || rc=1
done
exit $rc
