# Phases for scripts/test: `phase NAME` ends the running phase and starts the next, printing a
# header; at exit (pass or fail) the wall time of each phase and the ten slowest tests of every
# JUnit report recorded with `record_junit` are printed. Sourced, not run.

_phase_names=()
_phase_secs=()
_phase_name=""
_phase_start=0
_run_start=$SECONDS
_junit_reports=()
_exit_actions=()
_background_lines=()

_phase_end() {
  if [ -n "$_phase_name" ]; then
    _phase_names+=("$_phase_name")
    _phase_secs+=($((SECONDS - _phase_start)))
    _phase_name=""
  fi
}

phase() {
  _phase_end
  _phase_name=$1
  _phase_start=$SECONDS
  printf '\n== %s\n' "$1"
}

phase_done() { _phase_end; }

# A line for the table about work that ran beside the phases (its own wall time).
background_phase() { _background_lines+=("$(printf '%-58s %6ss' "$1 (beside the above)" "$2")"); }

record_junit() { _junit_reports+=("$1"); }

on_exit() { _exit_actions+=("$1"); }

# Marks an ended phase as the one that failed (otherwise the phase running at exit is marked).
_failed_marked=""
phase_failed() {
  local i
  _phase_end
  for i in "${!_phase_names[@]}"; do
    [ "${_phase_names[$i]}" = "$1" ] && _phase_names[$i]="$1 (FAILED)" && _failed_marked=1
  done
}

_phase_table() {
  local status=$1 i total=$((SECONDS - _run_start))
  if [ -n "$_phase_name" ]; then
    local failed=$_phase_name
    _phase_end
    [ "$status" -ne 0 ] && [ -z "$_failed_marked" ] &&
      _phase_names[${#_phase_names[@]}-1]="$failed (FAILED)"
  fi
  printf '\n== where the time went (wall clock)\n'
  for i in "${!_phase_names[@]}"; do
    printf '   %-58s %6ss\n' "${_phase_names[$i]}" "${_phase_secs[$i]}"
  done
  for i in "${_background_lines[@]+"${_background_lines[@]}"}"; do printf '   %s\n' "$i"; done
  printf '   %-58s %6ss (%dm%02ds)\n' "total" "$total" $((total / 60)) $((total % 60))
  if [ ${#_junit_reports[@]} -gt 0 ] && command -v python3 >/dev/null 2>&1; then
    printf '\n== the ten slowest tests (JUnit: %s)\n' "${_junit_reports[*]}"
    python3 - "${_junit_reports[@]}" <<'PY' || true
import sys, xml.etree.ElementTree as ET
rows = []
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"   (no report at {path}: {e})")
        continue
    profile = path.rstrip("/").split("/")[-2]
    for case in root.iter("testcase"):
        rows.append((float(case.get("time", "0")), profile, case.get("classname", ""), case.get("name", "")))
for secs, profile, binary, name in sorted(rows, reverse=True)[:10]:
    print(f"   {secs:8.1f}s  [{profile}] {binary} {name}")
PY
  fi
}

_on_exit() {
  local status=$?
  local action
  for action in "${_exit_actions[@]+"${_exit_actions[@]}"}"; do eval "$action" || true; done
  _phase_table "$status"
  exit "$status"
}
trap _on_exit EXIT
