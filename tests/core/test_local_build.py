"""llama.cpp's build for the [local] extra is chosen from the CPU: its own vector extensions on, AMX never
(its backend segfaults on the first completion), and the wheel kept under a name that carries its flags."""

from __future__ import annotations

import tomllib
from pathlib import Path

from agent.core.local_build import VERSION, built_wheel, choose_build, cpu_flags, has_amx, wheel_dir
from agent.core.resources import PROJECT_DIR

SAPPHIRE_RAPIDS = ("flags\t\t: fpu sse sse2 avx avx2 fma f16c bmi2 avx512f avx512dq avx512vbmi avx512_vnni "
                   "avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8\n")
EPYC = "flags\t\t: fpu sse avx avx2 fma f16c bmi2 avx512f avx512vbmi avx512_vnni avx512_bf16\n"
OLD_XEON = "flags\t\t: fpu sse avx\n"


def switches(cpuinfo: str) -> dict[str, str]:
    build = choose_build(cpu_flags(cpuinfo), "x86_64")
    return dict(arg.removeprefix("-D").split("=") for arg in build.cmake_args)


def test_an_amx_cpu_keeps_its_avx512_and_loses_only_amx() -> None:
    assert has_amx(cpu_flags(SAPPHIRE_RAPIDS))
    got = switches(SAPPHIRE_RAPIDS)
    assert got["GGML_NATIVE"] == "OFF", "a native build would compile the AMX backend in"
    assert got["GGML_AMX_TILE"] == got["GGML_AMX_INT8"] == got["GGML_AMX_BF16"] == "OFF"
    assert got["GGML_AVX512"] == got["GGML_AVX512_VNNI"] == got["GGML_AVX512_BF16"] == got["GGML_AVX_VNNI"] == "ON"
    assert "AMX" in choose_build(cpu_flags(SAPPHIRE_RAPIDS), "x86_64").reason


def test_a_cpu_without_an_extension_gets_it_switched_off() -> None:
    got = switches(OLD_XEON)
    assert got["GGML_AVX"] == "ON" and got["GGML_AVX2"] == "OFF" and got["GGML_AVX512"] == "OFF"
    assert switches(EPYC)["GGML_AVX512_VBMI"] == "ON"


def test_other_machines_keep_the_default_build() -> None:
    assert choose_build(cpu_flags(EPYC), "aarch64").cmake_args == ()
    assert choose_build(frozenset(), "x86_64").cmake_args == ()


def test_the_wheel_is_kept_by_its_flags_so_a_native_wheel_never_comes_back(tmp_path: Path) -> None:
    amx = choose_build(cpu_flags(SAPPHIRE_RAPIDS), "x86_64")
    epyc = choose_build(cpu_flags(EPYC), "x86_64")
    assert amx.key != epyc.key and amx.key.startswith(VERSION)
    assert built_wheel(amx, tmp_path) is None
    wheel_dir(amx, tmp_path).mkdir(parents=True)
    (wheel_dir(amx, tmp_path) / f"llama_cpp_python-{VERSION}-cp311-cp311-linux_x86_64.whl").write_bytes(b"")
    assert built_wheel(amx, tmp_path) is not None and built_wheel(epyc, tmp_path) is None


def test_the_extra_pins_the_version_the_build_makes() -> None:
    extra = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text(encoding="utf-8"))
    local = extra["project"]["optional-dependencies"]["local"]
    assert f"llama-cpp-python[server]=={VERSION}" in local


def test_the_makefile_builds_it_before_the_extra_is_installed() -> None:
    makefile = (PROJECT_DIR / "Makefile").read_text(encoding="utf-8")
    build = makefile.index("-m agent.core.local_build install")
    assert build < makefile.index("pip install --quiet -e '.[$(EXTRAS)]'")
