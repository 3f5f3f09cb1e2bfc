# shellcheck shell=bash
# The one build configuration of both README commands (scripts/test and scripts/demo), sourced
# by both, so that whichever runs second reuses what the first built instead of reconfiguring
# and rebuilding everything.
#
# Both may run as root under sudo (the lab and the root-only tests need it). The checkout is the
# invoking user's, so under sudo the build runs as that user, and whatever root itself left in
# the build folder (ctest's Testing/ logs, test scratch files) is given back to that user on the
# way out: the user's next `scripts/test` or `cmake --build` can always write there.

fabgate_cmake_flags=(-G Ninja -DFABGATE_WERROR=ON -DFABGATE_DEBUG_INFO=OFF)

# The user the checkout belongs to when this runs as root under sudo; empty otherwise.
fabgate_invoking_user() {
  if [[ $(id -u) -eq 0 && -n ${SUDO_UID:-} && ${SUDO_UID} != 0 ]]; then
    echo "$SUDO_UID"
  fi
}

# Gives files root created under FOLDER back to the invoking user (no-op unless under sudo).
fabgate_give_back() {
  local folder=$1 uid
  uid=$(fabgate_invoking_user)
  [[ -n $uid && -e $folder ]] || return 0
  chown -R --from=0 "$uid:${SUDO_GID:-$uid}" "$folder" 2>/dev/null || true
}

# fabgate_build DIR [TARGET...]: configures DIR with the shared flags and builds the targets
# (all without any), as the invoking user under sudo.
fabgate_build() {
  local dir=$1 uid
  shift
  local as_user=()
  uid=$(fabgate_invoking_user)
  if [[ -n $uid ]]; then
    # A build folder an earlier root run left root-owned is handed back first.
    fabgate_give_back "$dir"
    # setpriv (util-linux, on every Debian) drops to the user with this environment kept.
    as_user=(setpriv --reuid="$uid" --regid="${SUDO_GID:-$uid}" --clear-groups --)
  fi
  local targets=()
  for target in "$@"; do targets+=(--target "$target"); done
  "${as_user[@]}" cmake -S . -B "$dir" "${fabgate_cmake_flags[@]}" >/dev/null
  "${as_user[@]}" cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
}
