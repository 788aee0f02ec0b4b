# Sourced by the build and test scripts: `phase NAME` says how long the work since the previous
# call (or since sourcing) took, and appends "NAME SECONDS" to $POTOP_PHASE_LOG when it is set,
# so that .ci/run can print every phase's time at its end.
phase_started=$SECONDS
phase() {
  local took=$((SECONDS - phase_started))
  echo "phase: $1 took $took s"
  if [ -n "${POTOP_PHASE_LOG:-}" ]; then echo "$1 $took" >>"$POTOP_PHASE_LOG"; fi
  phase_started=$SECONDS
}
