# The peers' virtual environment, bench/peers/.venv (ignored by git), with the wheels pinned in
# bench/peers/requirements.txt (binary wheels only: the peers and pyosmium, cp312-abi3, so Python
# ≥ 3.12 with venv and pip). Sourced from the repository root by bench/peers/run.sh and
# bench/scale/run.sh: `peers_venv` creates or reuses it and sets `venv`; when it cannot, it returns 1
# with the reason in `venv_problem`. QUIETWAY_PEERS_PYTHON names a Python to use.
venv=bench/peers/.venv
venv_req=bench/peers/requirements.txt
venv_problem=""

venv_usable() { "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }

peers_venv() {
  if [ ! -x "$venv/bin/python" ] || ! venv_usable "$venv/bin/python"; then
    local py="" c p d
    local candidates=("${QUIETWAY_PEERS_PYTHON:-}" python3.13 python3.12 python3)
    if command -v pyenv >/dev/null 2>&1; then
      for d in "$(pyenv root)"/versions/3.1[2-9]*; do [ -x "$d/bin/python3" ] && candidates+=("$d/bin/python3"); done
    fi
    for c in "${candidates[@]}"; do
      [ -n "$c" ] || continue
      p=$(command -v "$c" 2>/dev/null) || continue
      if venv_usable "$p"; then py="$p"; break; fi
    done
    if [ -z "$py" ]; then venv_problem="no Python ≥ 3.12 with venv and pip found"; return 1; fi
    rm -rf "$venv"
    "$py" -m venv "$venv" || { venv_problem="$py could not create a virtual environment"; return 1; }
  fi
  # Installs (or confirms) the pinned wheels; binary wheels only, never a source build.
  if ! cmp -s "$venv_req" "$venv/.installed-requirements.txt" 2>/dev/null; then
    "$venv/bin/python" -m pip install -q --only-binary=:all: -r "$venv_req" ||
      { venv_problem="pip could not install $venv_req"; return 1; }
    cp "$venv_req" "$venv/.installed-requirements.txt"
  fi
}
