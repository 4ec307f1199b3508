"""How llama.cpp is built for the ``[local]`` extra, chosen from this machine's CPU, and the wheel that
build makes, kept under a name that carries its build flags.

Why: ``pip install llama-cpp-python`` compiles llama.cpp with ``GGML_NATIVE=ON``, i.e. for every
instruction set the building CPU has. On CPUs with AMX (Intel Sapphire Rapids and newer, e.g. AWS
m7i), that build routes matrix products through ggml's AMX backend, which segfaults on the first
completion (ggml-org/llama.cpp#20824). So the project builds with ``GGML_NATIVE=OFF`` and names the
instruction sets itself: every AVX/AVX2/AVX-512 extension the CPU has (the speed stays), AMX never.

Why a wheel of our own: pip caches a wheel it built by the package's version, not by the flags it
was built with, so a wheel once built natively would come back from pip's cache on the next install.
``install`` therefore builds with ``--no-cache-dir`` into ``~/.cache/tangram-agent/llama-wheels/KEY``,
KEY being the version and a hash of the flags, and installs that file: a change of flags (or of
CPU) makes a new KEY, an unchanged one reuses the wheel without compiling again.

Used by the Makefile before ``pip install -e '.[local]'`` (so ``make local`` and ``.ci/run`` get this
build) and by hand: ``python -m agent.core.local_build install [--force]``; ``python -m
agent.core.local_build flags`` prints the CMake arguments. Standard library only: it runs in a fresh
venv before the project is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "llama-cpp-python"
VERSION = "0.3.36"
"""The llama-cpp-python release the [local] extra pins (pyproject.toml says the same; a test checks)."""
CPUINFO = Path("/proc/cpuinfo")
WHEEL_ROOT = Path(os.environ.get("TANGRAM_AGENT_CACHE", Path.home() / ".cache" / "tangram-agent")) / "llama-wheels"

# ggml's CMake switch for each x86 instruction-set extension, by the flag /proc/cpuinfo lists.
X86_SWITCHES: tuple[tuple[str, str], ...] = (
    ("avx", "GGML_AVX"),
    ("avx2", "GGML_AVX2"),
    ("avx_vnni", "GGML_AVX_VNNI"),
    ("bmi2", "GGML_BMI2"),
    ("fma", "GGML_FMA"),
    ("f16c", "GGML_F16C"),
    ("avx512f", "GGML_AVX512"),
    ("avx512vbmi", "GGML_AVX512_VBMI"),
    ("avx512_vnni", "GGML_AVX512_VNNI"),
    ("avx512_bf16", "GGML_AVX512_BF16"),
)
AMX_SWITCHES = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")
"""Always off: the AMX backend is what crashes (see the module's docstring)."""


@dataclass(frozen=True)
class Build:
    """The CMake arguments for this machine and why they were chosen."""

    cmake_args: tuple[str, ...]
    reason: str

    @property
    def key(self) -> str:
        digest = hashlib.sha256(" ".join(self.cmake_args).encode()).hexdigest()[:12]
        return f"{VERSION}-{digest}"


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The instruction-set flags of the first CPU in a /proc/cpuinfo text."""
    match = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    return frozenset(match.group(1).split()) if match else frozenset()


def has_amx(flags: frozenset[str]) -> bool:
    return any(flag.startswith("amx") for flag in flags)


def choose_build(flags: frozenset[str], machine: str) -> Build:
    """Non-native on x86 with the CPU's own extensions switched on one by one and AMX off; anything
    else (ARM, or no /proc/cpuinfo) keeps llama.cpp's default native build, which has no AMX path."""
    if machine.lower() not in {"x86_64", "amd64"} or not flags:
        return Build((), f"{machine or 'unknown'} CPU: llama.cpp's default build (no AMX code on it)")
    args = ["-DGGML_NATIVE=OFF"]
    args += [f"-D{switch}={'ON' if flag in flags else 'OFF'}" for flag, switch in X86_SWITCHES]
    args += [f"-D{switch}=OFF" for switch in AMX_SWITCHES]
    kept = [flag for flag, _ in X86_SWITCHES if flag in flags]
    amx = "this CPU has AMX, whose llama.cpp backend crashes: left out" if has_amx(flags) else "AMX off"
    return Build(tuple(args), f"x86-64 with {', '.join(kept) or 'no vector extensions'}; {amx}")


def this_machine() -> Build:
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    return choose_build(cpu_flags(text), platform.machine())


def wheel_dir(build: Build, root: Path = WHEEL_ROOT) -> Path:
    return root / build.key


def built_wheel(build: Build, root: Path = WHEEL_ROOT) -> Path | None:
    found = sorted(wheel_dir(build, root).glob("llama_cpp_python-*.whl"))
    return found[-1] if found else None


def build_wheel(build: Build, root: Path = WHEEL_ROOT, python: str = sys.executable) -> Path:
    """Compile llama-cpp-python with ``build``'s flags (minutes) unless that wheel exists already."""
    existing = built_wheel(build, root)
    if existing is not None:
        return existing
    target = wheel_dir(build, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        env = {**os.environ, "CMAKE_ARGS": " ".join(build.cmake_args), "FORCE_CMAKE": "1"}
        print(f"building {PACKAGE} {VERSION} for this CPU ({build.reason}); this takes a few minutes",
              file=sys.stderr, flush=True)
        subprocess.run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir",
                        "--no-binary", PACKAGE, "--wheel-dir", scratch, f"{PACKAGE}=={VERSION}"],
                       env=env, check=True)
        made = sorted(Path(scratch).glob("llama_cpp_python-*.whl"))
        if not made:
            raise SystemExit(f"pip made no {PACKAGE} wheel in {scratch}")
        Path(scratch, "BUILD").write_text(f"{build.reason}\n{' '.join(build.cmake_args)}\n", encoding="utf-8")
        Path(scratch).rename(target)  # whole or not at all: a build cut short leaves no half wheel
    wheel = built_wheel(build, root)
    assert wheel is not None
    return wheel


def install(force: bool = False, python: str = sys.executable, root: Path = WHEEL_ROOT) -> Path:
    build = this_machine()
    if force and wheel_dir(build, root).exists():
        for old in wheel_dir(build, root).iterdir():
            old.unlink()
        wheel_dir(build, root).rmdir()
    wheel = build_wheel(build, root, python)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)],
                   check=True)
    print(f"{PACKAGE} {VERSION} installed from {wheel} ({build.reason})", file=sys.stderr)
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.core.local_build",
                                     description="Build llama-cpp-python for this CPU (never with AMX) and install it.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("flags", help="print the CMake arguments chosen for this CPU, and why")
    inst = sub.add_parser("install", help="build (once per CPU and flags) and install the wheel")
    inst.add_argument("--force", action="store_true", help="build again even if this CPU's wheel exists")
    args = parser.parse_args(argv)
    if args.command == "flags":
        build = this_machine()
        print(" ".join(build.cmake_args))
        print(f"# {build.reason}; wheel cache {wheel_dir(build)}", file=sys.stderr)
        return 0
    install(force=args.force)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
