# Shared by run-one.sh (compare) and scripts/golden-update.sh (rewrite): runs
# the case NAME.args names and sets $actual (stdout+stderr) and $rc.
# $DATA is tests/data, $SHARED is ../shared/data; runs from the source root.
golden_run() {
  local args_file=$1
  DATA=tests/data
  SHARED=$PFI_SHARED_DIR/data
  cd "$PFI_SOURCE_DIR" || return 1
  eval "set -- $(cat "$args_file")"
  actual=$("$PFI_BIN" "$@" 2>&1)
  rc=$?
}
